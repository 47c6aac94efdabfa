// In-process profile of the tus path (no Next build, no proxy): the upload route handlers over node:http, one
// tus-js-client upload of a generated CSV with the time of each request, then the same file as one multipart POST.
//   npx tsx --conditions=react-server --tsconfig tsconfig.json bench/upload-tus-inprocess.ts [rows]   # DATABASE_URL=… for PostgreSQL
// (add --cpu-prof through node: node --cpu-prof --conditions=react-server --import tsx bench/upload-tus-inprocess.ts)
import { benchDb, benchEnv, benchAccount, benchExit } from "./bench-support";
import { serveRoutes } from "@/test/support/route-server";
import { UPLOAD_ROUTES, makeCsv, tusUpload } from "@/test/support/tus";
import { signAccessToken } from "@/lib/auth/tokens";

async function main() {
  benchEnv();
  await benchDb();
  const accountId = await benchAccount();
  const token = await signAccessToken(accountId);
  const server = await serveRoutes(UPLOAD_ROUTES);
  const csv = makeCsv(Number(process.argv[2] ?? 200000), 8);
  const t0 = performance.now();
  let last = t0;
  const r = await tusUpload(server.url, token, csv, {
    onAfterResponse: (req, res) => {
      const now = performance.now();
      console.log(req.getMethod(), res.getStatus(), res.getHeader("Upload-Offset"), ((now - last) / 1000).toFixed(2) + "s");
      last = now;
    },
  });
  console.log("total", ((performance.now() - t0) / 1000).toFixed(2), "bytes", csv.length, r.uploadId);
  const form = new FormData();
  form.append("file", new File([new Uint8Array(csv)], "b.csv", { type: "text/csv" }));
  const t1 = performance.now();
  const res = await fetch(`${server.url}/api/uploads`, { method: "POST", body: form, headers: { Authorization: `Bearer ${token}` } });
  console.log("multipart", res.status, ((performance.now() - t1) / 1000).toFixed(2));
  await server.close();
  await benchExit(0);
}
main();
