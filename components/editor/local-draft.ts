"use client";
// Unsaved work kept in the browser. The server stores only a workflow without problems (a half-built graph is
// refused with every problem listed), so the editor keeps each unsaved change here as it is made: a failed save, a
// closed tab or a reload loses nothing, and opening the workflow again brings the draft back. Only drafts of the
// version they started from come back; saving clears them.
import type { Graph } from "@/lib/client/types";

export type LocalDraft = { name: string; graph: Graph; savedAt: number; baseVersion: number };

const PREFIX = "flowmail:draft:";
/** Bigger drafts are not kept (localStorage holds a few MB per origin). */
const MAX_CHARS = 1_000_000;

export const draftKey = (workflowId: string | null) => `${PREFIX}${workflowId ?? "new"}`;

export function readLocalDraft(workflowId: string | null, version: number): LocalDraft | null {
  try {
    const text = window.localStorage.getItem(draftKey(workflowId));
    if (!text) return null;
    const draft = JSON.parse(text) as LocalDraft;
    if (!draft || typeof draft !== "object" || !Array.isArray(draft.graph?.nodes) || !Array.isArray(draft.graph?.edges)) return null;
    if (workflowId === null && draft.graph.nodes.length === 0) return null; // an empty new workflow is nothing to bring back
    return draft.baseVersion === version ? draft : null;
  } catch {
    return null;
  }
}

export function writeLocalDraft(workflowId: string | null, draft: LocalDraft): void {
  try {
    const text = JSON.stringify(draft);
    if (text.length <= MAX_CHARS) window.localStorage.setItem(draftKey(workflowId), text);
  } catch {
    // storage full or disabled: the editor still holds the work until the tab closes
  }
}

export function clearLocalDraft(workflowId: string | null): void {
  try {
    window.localStorage.removeItem(draftKey(workflowId));
  } catch {
    // nothing to clear
  }
}
