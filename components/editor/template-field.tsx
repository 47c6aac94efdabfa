"use client";
import { useRef, useState } from "react";
import { Input, Textarea, cx } from "@/components/ui";
import { openTemplateAt, type Suggestion } from "./suggestions";

/**
 * An input (or textarea) that offers upstream references after `{{`: ↑/↓ to choose, Enter or Tab to
 * insert, Escape to close. The rest is an ordinary text control.
 */
export function TemplateField({ id, value, onChange, suggestions, multiline, placeholder, testId, rows = 4 }: {
  id?: string;
  value: string;
  onChange: (value: string) => void;
  suggestions: Suggestion[];
  multiline?: boolean;
  placeholder?: string;
  testId?: string;
  rows?: number;
}) {
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const [open, setOpen] = useState<{ start: number; partial: string } | null>(null);
  const [active, setActive] = useState(0);
  const matches = open ? suggestions.filter((s) => s.ref.toLowerCase().startsWith(open.partial.toLowerCase())).slice(0, 8) : [];

  function refresh(text: string, caret: number | null) {
    const next = caret === null ? null : openTemplateAt(text, caret);
    setOpen(next);
    setActive(0);
  }

  function insert(suggestion: Suggestion) {
    const el = ref.current;
    if (!el || !open) return;
    const caret = el.selectionStart ?? value.length;
    const after = value.slice(caret);
    const closing = after.trimStart().startsWith("}}") ? "" : "}}";
    const next = value.slice(0, open.start) + suggestion.ref + closing + after;
    onChange(next);
    setOpen(null);
    const position = open.start + suggestion.ref.length + closing.length;
    // The caret goes after the insertion once React has rendered the new value. Only while the field still has the
    // focus (Enter, Tab and a click on a suggestion keep it there): someone who has moved on to another field within
    // that frame keeps typing there — re-focusing this one sent the next field's text into it (e2e/workflow-run.spec.ts
    // saw "Hello GraceThanks for rating us 4." as a subject).
    requestAnimationFrame(() => {
      if (document.activeElement === el) el.setSelectionRange(position, position);
    });
  }

  function keyDown(e: React.KeyboardEvent) {
    if (!matches.length) return;
    if (e.key === "ArrowDown") setActive((a) => (a + 1) % matches.length);
    else if (e.key === "ArrowUp") setActive((a) => (a - 1 + matches.length) % matches.length);
    else if (e.key === "Enter" || e.key === "Tab") insert(matches[active]);
    else if (e.key === "Escape") setOpen(null);
    else return;
    e.preventDefault();
    e.stopPropagation();
  }

  const common = {
    id,
    ref,
    value,
    placeholder,
    "data-testid": testId,
    autoComplete: "off",
    spellCheck: false,
    onKeyDown: keyDown,
    onBlur: () => setTimeout(() => setOpen(null), 120),
    onChange: (e: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => {
      onChange(e.target.value);
      refresh(e.target.value, e.target.selectionStart);
    },
    role: "combobox",
    "aria-expanded": matches.length > 0,
    "aria-autocomplete": "list" as const,
  };
  return (
    <div className="relative">
      {multiline ? <Textarea rows={rows} {...common} /> : <Input className="font-mono" {...common} />}
      {matches.length > 0 && (
        <ul role="listbox" className="absolute z-20 mt-1 max-h-56 w-full overflow-auto rounded-lg bg-white py-1 text-sm shadow-lg ring-1 ring-slate-200" data-testid="template-suggestions">
          {matches.map((s, i) => (
            <li
              key={s.ref}
              role="option"
              aria-selected={i === active}
              onMouseDown={(e) => {
                e.preventDefault();
                insert(s);
              }}
              className={cx("flex cursor-pointer justify-between gap-2 px-3 py-1.5", i === active ? "bg-brand-50 text-brand-800" : "text-slate-700")}
            >
              <span className="font-mono">{s.ref}</span>
              <span className="text-xs text-slate-400">{s.hint}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
