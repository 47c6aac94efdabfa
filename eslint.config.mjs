import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

/**
 * The layers, checked: a pattern is an import its zone may not make, written for the `@/` alias and for relative
 * paths. No allow-list: an import that breaks a rule moves (or the code it wants moves), it is not excused.
 */
const forbid = (...rules) => ["error", { patterns: rules.map(([regex, message]) => ({ regex, message })) }];
/** A folder by its alias path (`@/lib/http/…`) or by a relative path ending in its name (`../../lib/http/…`). */
const layer = (alias, name) => `^@/${alias}(/|$)|^\\.{1,2}/(.*/)?${name}(/|$)`;
const DB = [layer("db", "db"), "the database layer: go through a service or a port"];
const HTTP = [layer("lib/http", "http"), "the HTTP layer (AppError lives in lib/errors.ts)"];
const SERVICES = [layer("lib/services", "services"), "server services: a client component calls the API"];
const ENGINE = [layer("lib/engine", "engine"), "the run engine"];
const NODES = [layer("lib/nodes", "nodes"), "node executors and their ports (shared shapes live in lib/ledgers, lib/schemas)"];
const ENGINE_OUTSIDE_CORE = [
  "^@/lib/engine(/index)?$|^@/lib/engine/(pg|drivers)|^\\.\\./(pg|drivers)(/|-|$)|^\\.\\.(/index)?/?$",
  "PostgreSQL or a driver: the core decides, a RunStore remembers",
];
const CONFIG = [layer("lib/config", "config"), "the configuration: the wiring hands the core what it needs"];
const DRIVERS = [layer("lib/engine/drivers", "drivers"), "a driver: the ledgers are statements, not execution"];

const config = [
  ...nextVitals,
  ...nextTs,
  {
    ignores: [".next/**", ".next-*/**", "node_modules/**", ".data/**", "db/migrations/**", "e2e/screenshots/**", "test-results/**", "playwright-report/**", "next-env.d.ts"],
  },
  {
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "CallExpression[callee.name='eval']", message: "eval is forbidden" },
        { selector: "NewExpression[callee.name='Function']", message: "new Function is forbidden" },
      ],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  { files: ["components/**", "app/**/*.tsx"], rules: { "no-restricted-imports": forbid(SERVICES, ENGINE, DB) } },
  { files: ["db/**"], rules: { "no-restricted-imports": forbid(NODES, HTTP) } },
  { files: ["lib/engine/pg/*-ledger*.ts"], rules: { "no-restricted-imports": forbid(NODES, HTTP, DRIVERS) } },
  { files: ["lib/nodes/**"], rules: { "no-restricted-imports": forbid(DB, HTTP) } },
  { files: ["lib/graph/**"], rules: { "no-restricted-imports": forbid(ENGINE) } },
  { files: ["lib/engine/core/**"], rules: { "no-restricted-imports": forbid(DB, ENGINE_OUTSIDE_CORE, CONFIG) } },
  {
    // Tests read untyped JSON answers.
    files: ["**/*.test.ts", "test/**", "e2e/**", "bench/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // Playwright fixtures call `use()`, which is not React's hook.
    files: ["e2e/**"],
    rules: { "react-hooks/rules-of-hooks": "off" },
  },
];

export default config;
