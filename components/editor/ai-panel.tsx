"use client";
// The AI node's own controls beside its definition's form: "Once" or "For each item of …" (the list picker), the
// fields the items have (what {{item.…}} may name).
import { useMemo, useState } from "react";
import type { Graph } from "@/lib/client/types";
import { Field, Select, cx } from "@/components/ui";
import { issueFor, patch, type Config, type Issue } from "./form-fields";
import { listChoices, listItemFields, type Suggestion } from "./suggestions";
import { TemplateField } from "./template-field";

const OTHER = "__other__";

export function AiForEachField({ nodeId, config, graph, issues, columnsByUpload, suggestions, onChange }: {
  nodeId: string;
  config: Config;
  graph: Graph;
  issues: Issue[];
  columnsByUpload: Record<string, string[]>;
  suggestions: Suggestion[];
  onChange: (config: Config) => void;
}) {
  const forEach = typeof config.forEach === "string" ? config.forEach : "";
  const choices = useMemo(() => listChoices(graph, nodeId), [graph, nodeId]);
  // "For each" stays chosen while its list is still empty (just switched, or cleared to pick another).
  const [eachChosen, setEachChosen] = useState(forEach !== "");
  const each = eachChosen || forEach !== "";
  const known = choices.some((c) => c.ref === forEach.trim());
  const [typing, setTyping] = useState(forEach !== "" && !known);
  const fields = useMemo(() => {
    const byId = new Map(graph.nodes.map((n) => [n.id, n]));
    return listItemFields(forEach, byId, columnsByUpload);
  }, [graph, forEach, columnsByUpload]);
  const setForEach = (value: string) => onChange(patch(config, "forEach", value));
  const choose = (mode: "once" | "each") => {
    setEachChosen(mode === "each");
    if (mode === "once") {
      setTyping(false);
      // Without forEach the node is one call: onItemError means nothing there.
      onChange(patch(patch(config, "forEach", ""), "onItemError", ""));
    } else if (!forEach && choices.length === 1) {
      setForEach(choices[0].ref);
    }
  };
  const error = issueFor(issues, "forEach");
  return (
    <div className="space-y-2" data-testid="ai-foreach">
      <p className="text-sm font-medium text-slate-700" id={`${nodeId}-calls`}>
        Calls
      </p>
      <div className="grid grid-cols-2 rounded-lg bg-slate-100 p-1 text-sm" role="radiogroup" aria-labelledby={`${nodeId}-calls`}>
        {(["once", "each"] as const).map((mode) => (
          <button
            key={mode}
            type="button"
            role="radio"
            aria-checked={(mode === "each") === each}
            data-testid={`ai-calls-${mode}`}
            onClick={() => choose(mode)}
            className={cx("rounded-md px-2 py-1.5 font-medium", (mode === "each") === each ? "bg-white text-slate-900 shadow-sm" : "text-slate-600 hover:text-slate-800")}
          >
            {mode === "once" ? "Once" : "For each item"}
          </button>
        ))}
      </div>
      {!each ? (
        <p className="text-xs text-slate-500">One call for the whole run; its answer is the declared fields.</p>
      ) : (
        <>
          <Field label="For each item of" error={error} hint={typing ? "A list such as {{src.rows}}: one call per element." : undefined}>
            {(id) =>
              typing ? (
                <TemplateField id={id} value={forEach} onChange={setForEach} suggestions={suggestions.filter((s) => !s.ref.startsWith("item."))} placeholder="{{src.rows}}" testId="ai-foreach" />
              ) : (
                <Select
                  id={id}
                  value={known ? forEach.trim() : ""}
                  data-testid="ai-foreach-list"
                  onChange={(e) => {
                    if (e.target.value === OTHER) setTyping(true);
                    else setForEach(e.target.value);
                  }}
                >
                  <option value="">{choices.length ? "Choose a list…" : "Connect a data source above this node"}</option>
                  {choices.map((c) => (
                    <option key={c.ref} value={c.ref}>
                      {c.ref} — {c.label}
                    </option>
                  ))}
                  <option value={OTHER}>Another list (type a template)…</option>
                </Select>
              )
            }
          </Field>
          {typing && choices.length > 0 && (
            <button type="button" className="text-xs font-medium text-brand-700 hover:underline" onClick={() => setTyping(false)}>
              Pick from the lists above this node
            </button>
          )}
          {fields && fields.length > 0 && (
            <p className="text-xs leading-relaxed text-slate-500" data-testid="ai-item-fields">
              Each item has{" "}
              {fields.map((f) => (
                <code key={f.name} className="mr-1 inline-block rounded bg-slate-100 px-1 font-mono text-slate-700">{`{{item.${f.name}}}`}</code>
              ))}
              — type <code className="font-mono">{"{{"}</code> in the prompt to insert one.
            </p>
          )}
        </>
      )}
    </div>
  );
}
