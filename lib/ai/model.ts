import "server-only";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModel } from "ai";
import { createGuardedFetch } from "@/lib/net/guarded-fetch";
import type { AiProvider, AiSettings } from "./settings";

export const DEFAULT_MODELS: Record<Exclude<AiProvider, "openai-compatible">, string> = {
  openai: "gpt-4o-mini",
  anthropic: "claude-3-5-haiku-latest",
};

/** The model id a call will use: the node's, else the account's, else the provider's default. */
export function resolveModelId(settings: AiSettings, nodeModel: string | undefined): string | null {
  if (nodeModel) return nodeModel;
  if (settings.model) return settings.model;
  return settings.provider === "openai-compatible" ? null : DEFAULT_MODELS[settings.provider];
}

/**
 * The AI SDK model for the account's provider. openai-compatible servers (Ollama, vLLM, the test fake) speak the
 * Chat Completions API, so they go through `.chat()`; OpenAI itself too, which keeps one wire format.
 */
export function languageModel(settings: AiSettings, modelId: string): LanguageModel {
  switch (settings.provider) {
    case "anthropic":
      return createAnthropic({ apiKey: settings.apiKey, ...(settings.baseUrl ? { baseURL: settings.baseUrl } : {}) })(modelId);
    case "openai":
      return createOpenAI({ apiKey: settings.apiKey, ...(settings.baseUrl ? { baseURL: settings.baseUrl } : {}) }).chat(modelId);
    case "openai-compatible":
      // The base URL was checked when saved; its DNS may change since, so every call is checked again.
      return createOpenAI({
        apiKey: settings.apiKey,
        baseURL: settings.baseUrl ?? undefined,
        name: "openai-compatible",
        fetch: createGuardedFetch(),
      }).chat(modelId);
  }
}
