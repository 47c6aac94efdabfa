"use client";
// The list's per-workflow actions (rename, duplicate, export, delete with confirmation) and Import.
import { useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { createPortal } from "react-dom";
import { keys, useDeleteWorkflow } from "@/lib/client/hooks";
import type { WorkflowSummary } from "@/lib/client/types";
import { Button, ErrorAlert, Input } from "@/components/ui";
import { duplicateWorkflow, exportWorkflowFile, parseWorkflowFile, renameWorkflow, stashImportDraft } from "./workflow-api";

type Dialog = "rename" | "delete" | null;
type MenuPlace = { top: number; left: number };

const MENU_WIDTH = 176;
const MENU_HEIGHT = 4 * 32 + 8;

/** Below the button, right-aligned with it; above it when the viewport has no room below. */
function menuPlace(button: DOMRect): MenuPlace {
  const below = button.bottom + 4;
  const top = below + MENU_HEIGHT <= window.innerHeight ? below : Math.max(4, button.top - 4 - MENU_HEIGHT);
  const left = Math.min(Math.max(4, button.right - MENU_WIDTH), window.innerWidth - MENU_WIDTH - 4);
  return { top, left };
}

export function WorkflowActions({ workflow }: { workflow: WorkflowSummary }) {
  const queryClient = useQueryClient();
  const router = useRouter();
  const remove = useDeleteWorkflow();
  const [menu, setMenu] = useState(false);
  const [dialog, setDialog] = useState<Dialog>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const menuRef = useRef<HTMLDivElement>(null);
  const panelRef = useRef<HTMLDivElement>(null);
  const [place, setPlace] = useState<MenuPlace | null>(null);

  // The menu closes on a click elsewhere, Escape, scrolling or resizing, as menus do.
  useEffect(() => {
    if (!menu) return;
    const inside = (target: EventTarget | null) => menuRef.current?.contains(target as Node) || panelRef.current?.contains(target as Node);
    const onDown = (e: MouseEvent) => !inside(e.target) && setMenu(false);
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && setMenu(false);
    const close = (e: Event) => !inside(e.target) && setMenu(false);
    document.addEventListener("mousedown", onDown);
    document.addEventListener("keydown", onKey);
    window.addEventListener("scroll", close, true);
    window.addEventListener("resize", close);
    return () => {
      document.removeEventListener("mousedown", onDown);
      document.removeEventListener("keydown", onKey);
      window.removeEventListener("scroll", close, true);
      window.removeEventListener("resize", close);
    };
  }, [menu]);

  function toggleMenu(button: HTMLElement) {
    if (menu) return setMenu(false);
    setPlace(menuPlace(button.getBoundingClientRect()));
    setMenu(true);
  }

  async function act(work: () => Promise<unknown>) {
    setMenu(false);
    setBusy(true);
    setError(null);
    try {
      await work();
      await queryClient.invalidateQueries({ queryKey: keys.workflows });
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  }

  const item = "block w-full px-3 py-1.5 text-left text-sm text-slate-700 hover:bg-slate-100 focus-visible:bg-slate-100 focus-visible:outline-none";
  return (
    <div className="relative inline-block text-left" ref={menuRef}>
      <Button
        variant="ghost"
        size="sm"
        aria-haspopup="menu"
        aria-expanded={menu}
        aria-label={`Actions for ${workflow.name}`}
        onClick={(e) => toggleMenu(e.currentTarget)}
        loading={busy}
        data-testid="workflow-actions"
      >
        ⋯
      </Button>
      {menu && place && createPortal(
        // In a portal with fixed coordinates: the table's card clips its overflow, which cut the menu of the lower rows.
        <div
          ref={panelRef}
          role="menu"
          style={{ position: "fixed", top: place.top, left: place.left, width: MENU_WIDTH }}
          className="z-50 rounded-lg bg-white py-1 shadow-lg ring-1 ring-slate-200"
          data-testid="workflow-menu"
        >
          <button role="menuitem" className={item} onClick={() => (setMenu(false), setDialog("rename"))} data-testid="action-rename">
            Rename…
          </button>
          <button
            role="menuitem"
            className={item}
            data-testid="action-duplicate"
            onClick={() => void act(() => duplicateWorkflow(workflow.id).then((copy) => router.push(`/workflows/${copy.id}`)))}
          >
            Duplicate
          </button>
          <button role="menuitem" className={item} onClick={() => void act(() => exportWorkflowFile(workflow.id))} data-testid="action-export">
            Export JSON
          </button>
          <button role="menuitem" className={`${item} text-red-700`} onClick={() => (setMenu(false), setDialog("delete"))} data-testid="action-delete">
            Delete…
          </button>
        </div>,
        document.body,
      )}
      {error ? <ErrorAlert error={error} className="absolute right-0 z-20 mt-1 w-72 text-left" /> : null}
      {dialog === "rename" && (
        <RenameDialog
          name={workflow.name}
          onCancel={() => setDialog(null)}
          onSave={async (name) => {
            if (await act(() => renameWorkflow(workflow.id, name))) setDialog(null);
          }}
        />
      )}
      {dialog === "delete" && (
        <Modal title={`Delete “${workflow.name}”?`} onCancel={() => setDialog(null)} testId="delete-dialog">
          <p className="text-sm text-slate-600">
            The workflow disappears from this list and its waiting runs are cancelled. Its run history stays readable. This cannot be undone.
          </p>
          <div className="mt-5 flex justify-end gap-2">
            <Button variant="secondary" onClick={() => setDialog(null)} data-testid="delete-cancel">
              Cancel
            </Button>
            <Button
              variant="danger"
              loading={remove.isPending}
              data-testid="delete-confirm"
              onClick={async () => {
                if (await act(() => remove.mutateAsync(workflow.id))) setDialog(null);
              }}
            >
              Delete workflow
            </Button>
          </div>
        </Modal>
      )}
    </div>
  );
}

function RenameDialog({ name, onCancel, onSave }: { name: string; onCancel: () => void; onSave: (name: string) => Promise<void> }) {
  const [value, setValue] = useState(name);
  const [saving, setSaving] = useState(false);
  return (
    <Modal title="Rename workflow" onCancel={onCancel} testId="rename-dialog">
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!value.trim()) return;
          setSaving(true);
          await onSave(value.trim());
          setSaving(false);
        }}
      >
        <Input value={value} onChange={(e) => setValue(e.target.value)} aria-label="New name" maxLength={200} autoFocus data-testid="rename-input" />
        <div className="mt-5 flex justify-end gap-2">
          <Button variant="secondary" onClick={onCancel}>
            Cancel
          </Button>
          <Button type="submit" loading={saving} disabled={!value.trim()} data-testid="rename-save">
            Rename
          </Button>
        </div>
      </form>
    </Modal>
  );
}

/** A native modal <dialog>: focus stays inside, Escape cancels, the page behind is inert. */
function Modal({ title, onCancel, testId, children }: { title: string; onCancel: () => void; testId: string; children: React.ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
      className="m-auto w-[min(28rem,calc(100vw-2rem))] rounded-xl bg-white p-6 text-left text-slate-900 shadow-xl ring-1 ring-slate-200 backdrop:bg-slate-900/40"
      aria-labelledby={`${testId}-title`}
      data-testid={testId}
    >
      <h2 id={`${testId}-title`} className="text-base font-semibold text-slate-900">
        {title}
      </h2>
      <div className="mt-2">{children}</div>
    </dialog>
  );
}

/** Import JSON: an exported file opens in the editor as an unsaved draft, its problems shown before saving. */
export function ImportButton() {
  const router = useRouter();
  const input = useRef<HTMLInputElement>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <Button variant="secondary" onClick={() => input.current?.click()} data-testid="import-workflow">
        Import JSON
      </Button>
      <input
        ref={input}
        type="file"
        accept="application/json,.json"
        className="hidden"
        data-testid="import-file"
        onChange={async (e) => {
          const file = e.target.files?.[0];
          e.target.value = "";
          if (!file) return;
          try {
            stashImportDraft(parseWorkflowFile(await file.text()));
            setError(null);
            router.push("/workflows/new?import=1");
          } catch (err) {
            setError(err instanceof Error ? err.message : "This file could not be read.");
          }
        }}
      />
      {error && (
        <p role="alert" className="basis-full text-right text-sm text-red-700" data-testid="import-error">
          {error}
        </p>
      )}
    </>
  );
}
