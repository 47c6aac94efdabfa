"use client";
// Keyboard shortcuts and the unsaved-changes guard of the editor.
import { useEffect, useEffectEvent } from "react";

/** Ctrl/Cmd+S saves everywhere; Ctrl/Cmd+Z and Shift+Z undo and redo unless a text field has focus (its own undo wins). */
export function useShortcuts(actions: { save: () => void; undo: () => void; redo: () => void }) {
  // An Effect Event always sees the latest actions without re-subscribing the listener.
  const onKeyEvent = useEffectEvent((e: KeyboardEvent) => {
    if (!(e.ctrlKey || e.metaKey)) return;
    const key = e.key.toLowerCase();
    if (key === "s") {
      e.preventDefault();
      actions.save();
      return;
    }
    const target = e.target as HTMLElement | null;
    if (target?.closest("input, textarea, select, [contenteditable=true]")) return;
    if (key === "z") {
      e.preventDefault();
      if (e.shiftKey) actions.redo();
      else actions.undo();
    } else if (key === "y") {
      e.preventDefault();
      actions.redo();
    }
  });
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => onKeyEvent(e);
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
}

/**
 * Asks before leaving with unsaved changes: `beforeunload` covers reloads and closing the tab, and a
 * capturing click listener covers in-app links (client-side navigation never fires `beforeunload`).
 */
export function useUnsavedGuard(dirty: boolean) {
  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = "";
    };
    const onClick = (e: MouseEvent) => {
      const link = (e.target as HTMLElement | null)?.closest("a[href]");
      if (!link || link.getAttribute("target") === "_blank" || e.defaultPrevented) return;
      if (!window.confirm("You have unsaved changes. Leave without saving?")) {
        e.preventDefault();
        e.stopPropagation();
      }
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    document.addEventListener("click", onClick, true);
    return () => {
      window.removeEventListener("beforeunload", onBeforeUnload);
      document.removeEventListener("click", onClick, true);
    };
  }, [dirty]);
}
