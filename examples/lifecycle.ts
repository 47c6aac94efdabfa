/**
 * The whole lifecycle with an API key and a typed client: upload a CSV, create a workflow, run it, poll it to SUCCESS.
 *
 *   FLOWMAIL_URL=http://localhost:3000 npm run example:types   # types from the running server's /api/openapi.json
 *   FLOWMAIL_URL=http://localhost:3000 FLOWMAIL_API_KEY=fmk_… npm run example
 *
 * The key needs the scopes uploads:write, workflows:write and runs:write (and runs:read to poll). `paths` comes from
 * examples/flowmail-api.d.ts, which `npm run example:types` generates with openapi-typescript; openapi-fetch checks
 * every path, parameter, body and answer below against it at compile time.
 */
import createClient from "openapi-fetch";
import type { paths } from "./flowmail-api";

const baseUrl = process.env.FLOWMAIL_URL ?? "http://localhost:3000";
const apiKey = process.env.FLOWMAIL_API_KEY;
if (!apiKey?.startsWith("fmk_")) throw new Error("Set FLOWMAIL_API_KEY to an API key (fmk_…), from Settings → API keys.");

const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

/** A failed call's problem+json (`code`, `detail`) as an exception. */
function must<T>(result: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (result.data === undefined) throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

async function main() {
  const csv = "name,email,rating\nAda,ada@example.com,5\nBob,bob@example.com,2\nCy,cy@example.com,4\n";
  const upload = must(
    await client.POST("/api/uploads", {
      body: { file: "reviews.csv" },
      // The typed body names the multipart field; the file itself goes in a FormData.
      bodySerializer: () => {
        const form = new FormData();
        form.append("file", new Blob([csv], { type: "text/csv" }), "reviews.csv");
        return form;
      },
    }),
    "upload",
  );
  console.log(`uploaded ${upload.uploadId}: ${upload.rowCount} rows, columns ${upload.columns.join(", ")}`);

  const workflow = must(
    await client.POST("/api/workflows", {
      body: {
        name: "Thank happy reviewers (API example)",
        graph: {
          nodes: [
            { id: "trigger", type: "TRIGGER", data: {} },
            { id: "src", type: "DATA_SOURCE", data: { uploadId: upload.uploadId } },
            { id: "happy", type: "FILTER", data: { source: "{{src.rows}}", expr: "rating >= 4" } },
            {
              id: "mail",
              type: "OUTPUT",
              data: { forEach: "{{happy.items}}", to: "{{item.email}}", subject: "Thanks, {{item.name}}!", body: "You rated us {{item.rating}}." },
            },
          ],
          edges: [
            { source: "trigger", target: "src" },
            { source: "src", target: "happy" },
            { source: "happy", target: "mail" },
          ],
        },
      },
    }),
    "create workflow",
  );
  console.log(`created ${workflow.id} (version ${workflow.version})`);

  const enqueued = must(
    await client.POST("/api/workflows/{workflowId}/run", { params: { path: { workflowId: workflow.id } } }),
    "run",
  );
  console.log(`enqueued ${enqueued.runId}`);

  for (let attempt = 0; attempt < 120; attempt++) {
    const run = must(
      await client.GET("/api/workflows/runs/{runId}", { params: { path: { runId: enqueued.runId }, query: { nodes: "map" } } }),
      "poll",
    );
    if (run.status === "SUCCESS") {
      console.log(`SUCCESS: ${run.result?.emailsSent} emails sent, ${run.result?.filteredOut} filtered out of ${run.result?.totalRows} rows`);
      return;
    }
    if (run.status === "FAILED") throw new Error(`the run failed: ${run.error}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error("the run did not finish within a minute");
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
