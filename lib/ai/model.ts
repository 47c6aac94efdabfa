import "server-only";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModel } from "ai";
import { createProviderFetch } from "@/lib/net/provider-fetch";
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
 *
 * Every provider's requests go through the provider fetch: a base URL was checked when saved, but its DNS may change
 * since (rebinding) and the SDKs' own fetch follows redirects anywhere, loopback included; so each call is checked
 * again, connects to the checked address only, never follows a redirect, reads a bounded answer and passes on only
 * a cleaned, short error message.
 */
export function languageModel(settings: AiSettings, modelId: string): LanguageModel {
  const fetch = createProviderFetch();
  const baseURL = settings.baseUrl ? { baseURL: settings.baseUrl } : {};
  switch (settings.provider) {
    case "anthropic":
      return createAnthropic({ apiKey: settings.apiKey, ...baseURL, fetch })(modelId);
    case "openai":
      return createOpenAI({ apiKey: settings.apiKey, ...baseURL, fetch }).chat(modelId);
    case "openai-compatible":
      return createOpenAI({ apiKey: settings.apiKey, ...baseURL, name: "openai-compatible", fetch }).chat(modelId);
  }
}
