import "server-only";
import { createHash } from "node:crypto";
import type { DeclaredOutput } from "./output-schema";

/**
 * The identity of one model request: provider, model, system, rendered prompt, declared outputs and temperature. The
 * answer ledger keeps an answer for this hash; a request that differs in any of them is a new request.
 */
export function requestHash(request: {
  provider: string;
  modelId: string;
  system?: string;
  prompt: string;
  outputs: DeclaredOutput[];
  temperature?: number;
}): string {
  const outputs = request.outputs.map((o) => [o.name, o.type, o.description ?? null]);
  const text = JSON.stringify([request.provider, request.modelId, request.system ?? null, request.prompt, outputs, request.temperature ?? null]);
  return createHash("sha256").update(text).digest("base64url");
}
