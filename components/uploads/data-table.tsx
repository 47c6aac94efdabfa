/** A plain, scrollable table of row objects (CSV rows, FILTER items). */
export function DataTable({ columns, rows, testId }: { columns: string[]; rows: Record<string, unknown>[]; testId?: string }) {
  return (
    <div className="max-h-[28rem] overflow-auto rounded-lg ring-1 ring-slate-200" data-testid={testId}>
      <table className="min-w-full text-sm">
        <thead className="sticky top-0 bg-slate-50 text-left text-xs font-medium text-slate-600">
          <tr>
            <th className="w-10 px-3 py-2 text-right text-slate-400">#</th>
            {columns.map((c) => (
              <th key={c} className="whitespace-nowrap px-3 py-2" data-testid="preview-column">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100 bg-white">
          {rows.map((row, i) => (
            <tr key={i} data-testid="preview-row">
              <td className="px-3 py-1.5 text-right font-mono text-xs text-slate-400">{i + 1}</td>
              {columns.map((c) => (
                <td key={c} className="max-w-xs truncate whitespace-nowrap px-3 py-1.5 text-slate-800" title={cell(row[c])}>
                  {cell(row[c])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** Column names of a list of objects, in first-seen order. */
export function columnsOf(rows: unknown[]): string[] {
  const seen = new Set<string>();
  for (const row of rows.slice(0, 100)) if (row && typeof row === "object" && !Array.isArray(row)) for (const key of Object.keys(row)) seen.add(key);
  return [...seen];
}
