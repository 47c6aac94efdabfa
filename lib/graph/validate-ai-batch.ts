// Save-time check of the AI node's batch mode against the account's provider (pure: the caller reads the provider).
import type { GraphError } from "./validate";

/** Providers with a batch API (OpenAI Batch, Anthropic Message Batches); an openai-compatible server has none. */
export const BATCH_MODE_PROVIDERS: readonly string[] = ["openai", "anthropic"];

const PROVIDER_NAMES: Record<string, string> = { "openai-compatible": "an OpenAI-compatible server" };

/**
 * An AI node with `mode: "batch"` when the account's provider has no batch API: a problem at
 * `graph.nodes[i].data.mode`. No provider configured yet: nothing to say now (the run says a key is missing).
 */
export function batchModeErrors(input: unknown, provider: string | null | undefined): GraphError[] {
  if (!provider || BATCH_MODE_PROVIDERS.includes(provider)) return [];
  const nodes = isRecord(input) && Array.isArray(input.nodes) ? input.nodes : [];
  const errors: GraphError[] = [];
  nodes.forEach((node: unknown, index) => {
    if (!isRecord(node) || node.type !== "AI" || !isRecord(node.data) || node.data.mode !== "batch") return;
    const name = PROVIDER_NAMES[provider] ?? provider;
    const error: GraphError = {
      path: `graph.nodes[${index}].data.mode`,
      code: "invalid_node_data",
      message: `Batch mode needs a provider with a batch API (OpenAI or Anthropic); your AI provider is ${name}. Use "sync", or change the provider under Settings → AI provider.`,
    };
    if (typeof node.id === "string") error.nodeId = node.id;
    errors.push(error);
  });
  return errors;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
