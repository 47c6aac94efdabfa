import "server-only";
import { requestHash } from "@/lib/ai/request-hash";
import { resolveModelId } from "@/lib/ai/model";
import { pricesFor, type Prices } from "@/lib/ai/prices";
import type { DeclaredOutput } from "@/lib/ai/output-schema";
import type { AiSettings } from "@/lib/ai/settings";
import { renderTemplate, renderTemplateString, TemplateError } from "@/lib/graph/templates";
import { describe } from "../filter/execute";
import type { LedgerKey } from "../ports";
import { NodeError, type NodeOf, type NodeRuntime } from "../types";

export type AiData = {
  prompt: string;
  output: DeclaredOutput[];
  model?: string;
  system?: string;
  temperature?: number;
  forEach?: string;
  onItemError?: "fail" | "skip";
  mode?: "sync" | "batch";
  maxCostUsd?: number;
  reuseAnswersDays?: number;
};

export const aiData = (node: NodeOf<"AI">) => node.data as AiData;

export const answerKey = (node: NodeOf<"AI">, rt: NodeRuntime): LedgerKey => ({ chainRunId: rt.ledgerRunId, nodeId: node.id, accountId: rt.accountId });

/** What every step of the node needs: the settings, the model, the list (null: one call), and the item renderer. */
export type Prepared = {
  settings: AiSettings;
  modelId: string;
  list: unknown[] | null;
  count: number;
  /** USD per million tokens (null: unknown). */
  prices: Prices;
  render(index: number): { prompt: string; system?: string; hash: string };
};

/** The node's runtime is built once per node and process, so its steps share one preparation (else: made again). */
const prepared = new WeakMap<NodeRuntime, Prepared>();

export async function prepare(node: NodeOf<"AI">, rt: NodeRuntime): Promise<Prepared> {
  const cached = prepared.get(rt);
  if (cached) return cached;
  const data = aiData(node);
  const settings = await rt.ports.aiSettings(rt.accountId);
  if (!settings) throw new NodeError("AI provider key not configured: add one under Settings → AI provider.");
  const modelId = resolveModelId(settings, data.model);
  if (!modelId) throw new NodeError("No AI model chosen: set one on this node or in Settings → AI provider.");
  const list = data.forEach ? forEachList(data.forEach, rt) : null;
  const render = (index: number) => {
    const item = list ? { value: list[index], index } : undefined;
    const prompt = renderField(data.prompt, "prompt", rt, item);
    const system = data.system ? renderField(data.system, "system", rt, item) : undefined;
    const hash = requestHash({ provider: settings.provider, modelId, system, prompt, outputs: data.output, temperature: data.temperature });
    return { prompt, system, hash };
  };
  const ready: Prepared = { settings, modelId, list, count: list ? list.length : 1, prices: pricesFor(settings, modelId), render };
  prepared.set(rt, ready);
  return ready;
}

/** The elements of `forEach`: must be a list. */
function forEachList(forEach: string, rt: NodeRuntime): unknown[] {
  let value: unknown;
  try {
    value = renderTemplate(forEach, rt.templateContext("forEach"));
  } catch (error) {
    if (error instanceof TemplateError) throw new NodeError(`forEach "${forEach}" cannot be read: ${error.message}. No model was asked.`, { cause: error });
    throw error;
  }
  if (!Array.isArray(value)) {
    throw new NodeError(`forEach "${forEach}" is not a list (it is ${describe(value)}): point it at an array such as {{src.rows}}. No model was asked.`);
  }
  return value;
}

function renderField(text: string, field: string, rt: NodeRuntime, item?: { value: unknown; index: number }): string {
  try {
    return renderTemplateString(text, rt.templateContext(field, item), { html: false });
  } catch (error) {
    if (error instanceof TemplateError) {
      const which = item ? ` for item ${item.index}` : "";
      throw new NodeError(`The ${field}${which} cannot be rendered: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

/** An input element with the declared fields added (they replace equal names); a scalar becomes `{ value, ...fields }`. */
export function mergeItem(element: unknown, fields: Record<string, unknown>): Record<string, unknown> {
  if (element !== null && typeof element === "object" && !Array.isArray(element)) return { ...(element as Record<string, unknown>), ...fields };
  return { value: element, ...fields };
}

/** 12345 → "12,345" without ICU (as OUTPUT's fmt). */
export const fmt = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
