// FILTER expression speed: compile once, evaluate per row over null-prototype rows of 8 string fields (the
// shape db/queries/upload-rows.ts produces). Run: npx tsx --conditions=react-server bench/filter-expression.ts
import { compileExpression, isTruthy } from "@/lib/graph/expressions";

const ROWS = 500_000;
const ROUNDS = 5;
const COUNTRIES = ["FR", "fr", "De", "US", "gb", "Fr", "es", "IT"];
const EXPRESSIONS = [
  'rating >= 4 && lower(country) == "fr"',
  'item.rating > 2 and email.endsWith("@example.com") and not (name in ["Ann", "Bob"])',
];

function makeRows(count: number): Record<string, string>[] {
  const rows: Record<string, string>[] = [];
  for (let i = 0; i < count; i++) {
    const row = Object.create(null) as Record<string, string>;
    row.id = String(i);
    row.name = `Person ${i}`;
    row.email = `person${i}@example.com`;
    row.country = COUNTRIES[i % COUNTRIES.length];
    row.rating = String(i % 6);
    row.city = "Lyon";
    row.plan = i % 3 === 0 ? "pro" : "free";
    row.note = "";
    rows.push(row);
  }
  return rows;
}

function measure(source: string, rows: Record<string, string>[]): { rowsPerSecond: number; kept: number } {
  const compiled = compileExpression(source);
  const nodes = { src: { rowCount: rows.length } };
  let kept = 0;
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    kept = 0;
    const started = process.hrtime.bigint();
    for (let i = 0; i < rows.length; i++) {
      if (isTruthy(compiled.evaluate({ item: rows[i], nodes }))) kept++;
    }
    best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e9);
  }
  return { rowsPerSecond: Math.round(rows.length / best), kept };
}

const rows = makeRows(ROWS);
const figures = EXPRESSIONS.map((source) => {
  const { rowsPerSecond, kept } = measure(source, rows);
  return `${JSON.stringify(source)}: ${(rowsPerSecond / 1e6).toFixed(2)}M rows/s (kept ${kept}/${ROWS})`;
});
console.log(`filter-expression best of ${ROUNDS} over ${ROWS} rows × 8 string fields — ${figures.join("; ")}`);
