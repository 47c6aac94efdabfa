"use client";
// Undo/redo over whole editor snapshots. Edits that arrive in a burst with the same key (typing in one
// field) fold into one step, so Ctrl+Z undoes a word, not a keystroke. The bookkeeping runs outside
// state updaters (which React may call twice) and reads the present from a ref kept in step with state.
import { useCallback, useRef, useState } from "react";

const LIMIT = 100;
const COALESCE_MS = 800;

type Next<T> = T | ((prev: T) => T);
const resolve = <T,>(next: Next<T>, prev: T): T => (typeof next === "function" ? (next as (p: T) => T)(prev) : next);

export function useHistory<T>(initial: T | (() => T)) {
  const [present, setPresent] = useState(initial);
  const current = useRef(present);
  const past = useRef<T[]>([]);
  const future = useRef<T[]>([]);
  const last = useRef<{ key: string; at: number } | null>(null);
  // Whether there is a step to undo or redo, mirrored into state whenever the stacks change (the stacks
  // themselves live in refs, which render must not read).
  const [canUndo, setCanUndo] = useState(false);
  const [canRedo, setCanRedo] = useState(false);
  const syncStacks = useCallback(() => {
    setCanUndo(past.current.length > 0);
    setCanRedo(future.current.length > 0);
  }, []);

  const set = useCallback(
    (value: T) => {
      current.current = value;
      setPresent(value);
      syncStacks();
    },
    [syncStacks],
  );

  /** The latest present, also inside a handler that runs before React re-renders (for event handlers only). */
  const getPresent = useCallback(() => current.current, []);

  /** Records a new step (unless it continues the same burst of edits). */
  const commit = useCallback(
    (next: Next<T>, coalesceKey?: string) => {
      const prev = current.current;
      const value = resolve(next, prev);
      if (value === prev) return;
      const now = Date.now();
      const continues = coalesceKey && last.current?.key === coalesceKey && now - last.current.at < COALESCE_MS;
      if (!continues) {
        past.current = [...past.current.slice(-LIMIT + 1), prev];
        future.current = [];
      }
      last.current = coalesceKey ? { key: coalesceKey, at: now } : null;
      set(value);
    },
    [set],
  );

  /** Changes the present without a history step (selection, a drag in progress). */
  const replace = useCallback((next: Next<T>) => set(resolve(next, current.current)), [set]);

  const undo = useCallback(() => {
    const previous = past.current.at(-1);
    if (previous === undefined) return;
    past.current = past.current.slice(0, -1);
    future.current = [current.current, ...future.current];
    last.current = null;
    set(previous);
  }, [set]);

  const redo = useCallback(() => {
    const [next, ...rest] = future.current;
    if (next === undefined) return;
    future.current = rest;
    past.current = [...past.current, current.current];
    last.current = null;
    set(next);
  }, [set]);

  /** Marks the start of a step whose end arrives later (a node drag): the state before it is kept. */
  const checkpoint = useCallback(() => {
    past.current = [...past.current.slice(-LIMIT + 1), current.current];
    future.current = [];
    last.current = null;
    syncStacks();
  }, [syncStacks]);

  const reset = useCallback(
    (value: T) => {
      past.current = [];
      future.current = [];
      last.current = null;
      set(value);
    },
    [set],
  );

  return { present, getPresent, commit, replace, undo, redo, reset, checkpoint, canUndo, canRedo };
}
