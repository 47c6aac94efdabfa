import "server-only";
import { and, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { runs } from "@/db/schema";
import type { ApiKeyGrant } from "@/lib/auth/api-keys";
import { authenticate, type AuthenticatedAccount } from "@/lib/auth/authenticate";
import type { OperationScope } from "@/lib/schemas/api-keys";
import { AppError, notFound } from "@/lib/errors";
import { operationAccess } from "./operation-access";

/**
 * Authenticates a request (a person's access token or session, or an API key) and, for a key, enforces what the
 * operation declares: its scope (403 `insufficient_scope`), "person" operations (403: keys never reach the account,
 * its keys, senders, the AI provider or Google), and the key's workflow confinement (another workflow or its runs
 * answer 404, exactly as another account's would).
 */
export async function authorize(req: Request, pathname: string, params: Record<string, unknown>): Promise<AuthenticatedAccount> {
  const account = await authenticate(req);
  if (!account.apiKey) return account;
  const access = operationAccess(req.method, pathname);
  if (!access?.auth) throw insufficientScope("person");
  assertScope(account.apiKey, access.scope);
  if (account.apiKey.workflowIds) {
    if (access.workflowCreating) {
      throw new AppError("forbidden", "This API key is confined to some workflows, so it cannot create workflows.");
    }
    await assertWithinWorkflows(account.id, account.apiKey.workflowIds, params);
  }
  return account;
}

/** Throws 403 `insufficient_scope` unless the key holds `scope` ("person" is never held by a key). */
export function assertScope(grant: ApiKeyGrant, scope: OperationScope): void {
  if (scope === "person" || !grant.scopes.includes(scope)) throw insufficientScope(scope);
}

/** RFC 6750 §3.1: the scope that would do, in the WWW-Authenticate challenge. */
export function insufficientScope(scope: OperationScope): AppError {
  if (scope === "person") {
    return new AppError("insufficient_scope", "API keys cannot call this endpoint: it takes a person's access token.", {
      headers: { "WWW-Authenticate": `Bearer error="insufficient_scope", error_description="API keys cannot call this endpoint"` },
    });
  }
  return new AppError("insufficient_scope", `This API key lacks the "${scope}" scope.`, {
    headers: { "WWW-Authenticate": `Bearer error="insufficient_scope", scope="${scope}"` },
    extensions: { requiredScope: scope },
  });
}

/** A confined key reaches only its workflows and their runs; anything else is "not found", never "forbidden". */
async function assertWithinWorkflows(accountId: string, workflowIds: readonly string[], params: Record<string, unknown>) {
  const workflowId = params.workflowId;
  if (typeof workflowId === "string" && !workflowIds.includes(workflowId)) throw notFound("Workflow");
  const runId = params.runId;
  if (typeof runId === "string") {
    if (runId.includes("\u0000")) throw notFound("Run");
    const db = await getDb();
    const [run] = await db
      .select({ workflowId: runs.workflowId })
      .from(runs)
      .where(and(eq(runs.id, runId), eq(runs.accountId, accountId)));
    if (!run || !workflowIds.includes(run.workflowId)) throw notFound("Run");
  }
}

/** A confined key's workflow ids for list filters, or undefined (every workflow). */
export function confinedWorkflowIds(account: AuthenticatedAccount): readonly string[] | undefined {
  return account.apiKey?.workflowIds ?? undefined;
}
