// postinstall: a small fix to postgres.js 3.4.9 (porsager/postgres#1208, #1133; fix proposed in #1155/#1176, not
// released). When a transaction's backend dies mid-query (server restart, pg_terminate_backend,
// idle_in_transaction_session_timeout), the transaction's own ROLLBACK is written to a connection that is closing:
// `nextWrite` runs on a null socket (an uncaught TypeError), and the connection keeps the stale bytes, a stale timer and
// the dead query as its current one. After it reconnects, its first query fails with the old session's error (57P01)
// and every later query on it hangs forever (reproduced: test/faults/driver-patch.test.ts). The fix: `closed()` drops
// the pending bytes and the query state (its queries were already rejected with CONNECTION_CLOSED); a query executed
// on a closed connection (the orphaned ROLLBACK) is rejected at once with CONNECTION_CLOSED instead of becoming its
// never-sent current query (answering true, so the transaction's handler does not park the connection in the "full"
// queue); and `nextWrite` does nothing without a socket. (Not upstream's #1155 `terminated = true` in `closed()`: a transaction's handler
// then moves the closed connection to the "full" queue, where the pool never reconnects it.)
// Idempotent; fails the install if the driver's source is not the one this patch was written for.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

const MARK = "/* flowmail: null-socket guard */";
let root;
try {
  // "postgres" resolves to <root>/cjs/src/index.js (its exports do not include package.json).
  root = path.resolve(createRequire(import.meta.url).resolve("postgres", { paths: [path.join(here, "..")] }), "../../..");
} catch {
  process.exit(0); // not installed (e.g. a production install without it): nothing to patch
}
const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));

const edits = [
  ["  function nextWrite(fn) {\n", `  function nextWrite(fn) {\n    ${MARK} if (!socket) return chunk = nextWriteTimer = null, false\n`],
  ["    clearImmediate(nextWriteTimer)\n    socket.removeListener('data', data)\n", `    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n    socket.removeListener('data', data)\n`],
  [
    "    if (terminated)\n      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))\n",
    "    if (terminated)\n      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))\n" +
      "    if (!socket && !initial)\n      return queryError(q, Errors.connection('CONNECTION_CLOSED', options)), true\n",
  ],
  [
    "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n",
    "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n" +
      "    query = results = errorResponse = null, result = new Result()\n",
  ],
];

for (const dir of ["cjs/src", "src", "cf/src"]) {
  const file = path.join(root, dir, "connection.js");
  if (!fs.existsSync(file)) continue;
  let source = fs.readFileSync(file, "utf8");
  if (source.includes(MARK)) continue;
  for (const [from, to] of edits) {
    if (!source.includes(from)) {
      console.error(`db/patch-postgres-driver.mjs: postgres ${version} ${dir}/connection.js has changed; re-check the fix (porsager/postgres#1208) and update or remove this patch.`);
      process.exit(1);
    }
    source = source.replace(from, to);
  }
  fs.writeFileSync(file, source);
}
