import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

// The layer rules of eslint.config.mjs, applied to one-line files placed in each zone: the forbidden import is
// reported, its allowed neighbour is not.

let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({ cwd: process.cwd() });
});

async function restricted(filePath: string, specifier: string): Promise<boolean> {
  const [result] = await eslint.lintText(`import * as m from "${specifier}";\nexport const x = m;\n`, { filePath });
  return result.messages.some((m) => m.ruleId === "no-restricted-imports");
}

const cases: [zone: string, file: string, forbidden: string[], allowed: string[]][] = [
  ["UI", "components/zz-layer.tsx", ["@/lib/services/runs/get-run", "@/lib/engine", "@/db/client", "../lib/services/runs/get-run", "../db"], ["@/lib/client/types", "./ui/button"]],
  ["app pages", "app/(app)/zz-layer/page.tsx", ["@/lib/engine/pg/queue", "@/db/schema"], ["@/components/ui/button"]],
  ["db", "db/queries/zz-layer.ts", ["@/lib/nodes/ports", "../../lib/nodes/ports", "@/lib/http/route", "../../lib/http/route"], ["@/lib/ledgers/types", "../schema"]],
  ["ledgers", "lib/engine/pg/zz-layer-ledger.ts", ["@/lib/nodes/ports", "../../nodes/ports", "@/lib/http/route", "../drivers/wake", "@/lib/engine/drivers/wake"], ["@/lib/ledgers/types", "@/db/client", "./run-log"]],
  ["nodes", "lib/nodes/output/zz-layer.ts", ["@/db/client", "../../../db/schema", "@/lib/http/route"], ["@/lib/errors"]],
  ["graph", "lib/graph/zz-layer.ts", ["@/lib/engine/core/execute-run", "../engine/core/run-store"], ["@/lib/schemas/runs", "./plan"]],
  ["engine core", "lib/engine/core/zz-layer.ts", ["@/db/schema", "../pg/queue", "../drivers/wake", "../pg-node-ports", "..", "@/lib/engine", "@/lib/config", "../../config"], ["./run-store", "@/lib/graph/plan", "@/lib/nodes/ports"]],
];

describe("layer rules", () => {
  it.each(cases)("%s: forbidden imports are reported, allowed ones are not", async (_zone, file, forbidden, allowed) => {
    for (const specifier of forbidden) expect(await restricted(file, specifier), specifier).toBe(true);
    for (const specifier of allowed) expect(await restricted(file, specifier), specifier).toBe(false);
  });
});
