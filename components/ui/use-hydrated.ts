"use client";
import { useSyncExternalStore } from "react";

const subscribe = () => () => {};

/**
 * False during server rendering and hydration, true after. Forms keep their submit button disabled until
 * then, so a click on a page that is still loading never falls back to a native GET submit of the form.
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(subscribe, () => true, () => false);
}
