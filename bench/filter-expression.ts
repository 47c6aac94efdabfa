// FILTER expression speed: compile once, evaluate per row over null-prototype rows of 8 string fields (the
// shape db/queries/upload-rows.ts produces). Run: npx tsx --conditions=react-server bench/filter-expression.ts
// Rates are rows per second of this process's CPU time (best round), so other work on a shared machine does
// not count against the figure; the wall-clock rate of the same round is printed beside it.
import { compileExpression, isTruthy } from "@/lib/graph/expressions";

const ROWS = 500_000;
const ROUNDS = 8;

type Round = { cpuSeconds: number; wallSeconds: number };

/** Runs `body` once and returns its CPU and wall time. */
function timed(body: () => void): Round {
  const cpuBefore = process.cpuUsage();
  const wallBefore = process.hrtime.bigint();
  body();
  const cpu = process.cpuUsage(cpuBefore);
  return { cpuSeconds: (cpu.user + cpu.system) / 1e6, wallSeconds: Number(process.hrtime.bigint() - wallBefore) / 1e9 };
}

function rate(rows: number, rounds: Round[]): string {
  const best = rounds.reduce((a, b) => (b.cpuSeconds < a.cpuSeconds ? b : a));
  return `${(rows / best.cpuSeconds / 1e6).toFixed(2)}M rows/s CPU (${(rows / best.wallSeconds / 1e6).toFixed(2)}M wall)`;
}
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

function measure(source: string, rows: Record<string, string>[]): { figure: string; kept: number } {
  const compiled = compileExpression(source);
  const nodes = { src: { rowCount: rows.length } };
  let kept = 0;
  const rounds: Round[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    kept = 0;
    rounds.push(
      timed(() => {
        for (let i = 0; i < rows.length; i++) if (isTruthy(compiled.evaluate({ item: rows[i], nodes }))) kept++;
      }),
    );
  }
  return { figure: rate(rows.length, rounds), kept };
}

/** The same filter written directly in JavaScript, to show the cost of the language itself. */
function measureNative(rows: Record<string, string>[]): string {
  const keep = (row: Record<string, string>) => Number(row.rating) >= 4 && row.country.toLowerCase() === "fr";
  const rounds: Round[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let kept = 0;
    rounds.push(
      timed(() => {
        for (let i = 0; i < rows.length; i++) if (keep(rows[i])) kept++;
      }),
    );
    if (kept !== 62_500) throw new Error("native baseline disagrees");
  }
  return rate(rows.length, rounds);
}

const rows = makeRows(ROWS);
const figures = EXPRESSIONS.map((source) => {
  const { figure, kept } = measure(source, rows);
  return `${JSON.stringify(source)}: ${figure}, kept ${kept}/${ROWS}`;
});
console.log(
  `filter-expression, best of ${ROUNDS} rounds over ${ROWS} rows × 8 string fields — ${figures.join("; ")}; ` +
    `hand-written JavaScript baseline: ${measureNative(rows)}`,
);
