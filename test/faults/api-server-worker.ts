// A Flowmail server process for the freeze and memory figures: the background work of `next start`
// (startBackgroundWork: executor lock, embedded executor, sweep) and the run routes over node:http in the same
// process, so a run that held the main thread would hold these requests too. Prints `listening <url>`.
import * as healthRoute from "@/app/api/health/route";
import * as runRoute from "@/app/api/workflows/[workflowId]/run/route";
import * as cancelRoute from "@/app/api/workflows/runs/[runId]/cancel/route";
import * as emailsRoute from "@/app/api/workflows/runs/[runId]/nodes/[nodeId]/emails/route";
import * as getRunRoute from "@/app/api/workflows/runs/[runId]/route";
import { startBackgroundWork } from "@/lib/services/background/start-background-work";
import { serveRoutes, type RouteTable } from "@/test/support/route-server";

export const API_ROUTES: RouteTable = [
  { pattern: /^\/api\/health$/, module: healthRoute },
  { pattern: /^\/api\/workflows\/(?<workflowId>wf_[^/]+)\/run$/, module: runRoute },
  { pattern: /^\/api\/workflows\/runs\/(?<runId>run_[^/]+)\/cancel$/, module: cancelRoute },
  { pattern: /^\/api\/workflows\/runs\/(?<runId>run_[^/]+)$/, module: getRunRoute },
  { pattern: /^\/api\/workflows\/runs\/(?<runId>run_[^/]+)\/nodes\/(?<nodeId>[^/]+)\/emails$/, module: emailsRoute },
];

async function main(): Promise<void> {
  await startBackgroundWork();
  const server = await serveRoutes(API_ROUTES, Number(process.env.PORT ?? 0));
  process.stdout.write(`listening ${server.url}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(2);
});
