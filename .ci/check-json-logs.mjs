// Every log line a Flowmail process wrote is one JSON object with level, time and msg. The only other lines allowed
// are Next.js's own start-up banner in the web process's output (its version, addresses and "Ready").
import { readFileSync } from "node:fs";

const banner = /^\s*(▲ Next\.js|- Local:|- Network:|✓ (Starting|Ready|Running next\.config))/u;
let failed = false;
let counted = 0;
for (const file of process.argv.slice(2)) {
  const lines = readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "");
  for (const line of lines) {
    if (!line.trimStart().startsWith("{")) {
      if (banner.test(line)) continue;
      console.error(`${file}: not a JSON line: ${line.slice(0, 200)}`);
      failed = true;
      continue;
    }
    try {
      const entry = JSON.parse(line);
      if (typeof entry.level !== "string" || typeof entry.time !== "string" || typeof entry.msg !== "string") throw new Error("level, time or msg missing");
      counted++;
    } catch (error) {
      console.error(`${file}: ${error.message}: ${line.slice(0, 200)}`);
      failed = true;
    }
  }
}
if (counted === 0) {
  console.error("no JSON log line at all");
  failed = true;
}
console.log(`log lines: ${counted} JSON objects${failed ? ", and lines that are not" : ", nothing else"}`);
process.exit(failed ? 1 : 0);
