"use client";
import { Button, Field, Input } from "@/components/ui";
import type { Suggestion } from "./suggestions";

/** The inspector of a selected edge: its optional condition. */
export function EdgePanel({ label, condition, suggestions, onChange, onDelete, issues }: {
  label: string;
  condition: string;
  suggestions: Suggestion[];
  onChange: (condition: string) => void;
  onDelete: () => void;
  issues?: string[];
}) {
  return (
    <div className="space-y-4 p-4" data-testid="edge-panel">
      <div className="flex items-start justify-between">
        <div>
          <p className="text-sm font-semibold text-slate-900">Edge</p>
          <p className="font-mono text-xs text-slate-500">{label}</p>
        </div>
        <Button variant="danger" size="sm" onClick={onDelete} data-testid="delete-edge">
          Delete
        </Button>
      </div>
      <Field label="Condition" error={issues?.length ? issues.join(" · ") : undefined} hint="Empty: always followed. Otherwise followed only when true, e.g. ai_1.score > 5 — add the negated condition on another edge for an else branch.">
        {(id) => (
          <>
            <Input id={id} className="font-mono" value={condition} onChange={(e) => onChange(e.target.value)} data-testid="edge-condition" list={`${id}-refs`} autoComplete="off" />
            {/* The datalist's id must be the one the input names, or the browser offers nothing. */}
            <datalist id={`${id}-refs`} data-testid="edge-condition-suggestions">
              {suggestions.map((s) => (
                <option key={s.ref} value={s.ref} />
              ))}
            </datalist>
          </>
        )}
      </Field>
    </div>
  );
}
