import "server-only";
import { AiCallError, generateStructured } from "@/lib/ai/generate";
import { resolveModelId } from "@/lib/ai/model";
import type { DeclaredOutput } from "@/lib/ai/output-schema";
import { renderTemplateString, TemplateError } from "@/lib/graph/templates";
import { NodeError, type NodeExecutor, type NodeRuntime } from "../types";

type AiData = { prompt: string; output: DeclaredOutput[]; model?: string; system?: string; temperature?: number };

export const aiExecutor: NodeExecutor<"AI"> = {
  async execute(node, rt) {
    const data = node.data as AiData;
    const settings = await rt.ports.aiSettings(rt.accountId);
    if (!settings) throw new NodeError("AI provider key not configured: add one under Settings → AI provider.");
    const modelId = resolveModelId(settings, data.model);
    if (!modelId) throw new NodeError("No AI model chosen: set one on this node or in Settings → AI provider.");
    const prompt = render(data.prompt, "prompt", rt);
    const system = data.system ? render(data.system, "system", rt) : undefined;
    try {
      const output = await generateStructured({ settings, modelId, prompt, system, temperature: data.temperature, outputs: data.output });
      return { kind: "done", output };
    } catch (error) {
      if (error instanceof AiCallError) throw new NodeError(error.message, { cause: error });
      throw error;
    }
  },
};

function render(text: string, field: string, rt: NodeRuntime): string {
  try {
    return renderTemplateString(text, rt.templateContext(field), { html: false });
  } catch (error) {
    if (error instanceof TemplateError) throw new NodeError(`The ${field} cannot be rendered: ${error.message}`, { cause: error });
    throw error;
  }
}
