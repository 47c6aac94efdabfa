"use client";
// Light, dark, or the system's choice (the default). The choice is kept in localStorage; an inline script in the
// root layout applies it before the first paint, so a dark page never flashes white.
import { useCallback, useSyncExternalStore } from "react";

export type ThemePreference = "system" | "light" | "dark";
const KEY = "flowmail:theme";
const EVENT = "flowmail:theme";
const DARK_QUERY = "(prefers-color-scheme: dark)";

/** Runs before hydration (as a string in <head>): the same decision as applyTheme, with nothing imported. */
export const THEME_SCRIPT = `try{var p=localStorage.getItem("${KEY}")||"system";var d=p==="dark"||(p==="system"&&matchMedia("${DARK_QUERY}").matches);document.documentElement.classList.toggle("dark",d);document.documentElement.style.colorScheme=d?"dark":"light"}catch(e){}`;

function readPreference(): ThemePreference {
  try {
    const value = localStorage.getItem(KEY);
    return value === "light" || value === "dark" ? value : "system";
  } catch {
    return "system";
  }
}

function resolve(preference: ThemePreference): "light" | "dark" {
  if (preference !== "system") return preference;
  return window.matchMedia(DARK_QUERY).matches ? "dark" : "light";
}

function applyTheme() {
  const dark = resolve(readPreference()) === "dark";
  document.documentElement.classList.toggle("dark", dark);
  document.documentElement.style.colorScheme = dark ? "dark" : "light";
}

function subscribe(notify: () => void) {
  const media = window.matchMedia(DARK_QUERY);
  const onChange = () => {
    applyTheme();
    notify();
  };
  media.addEventListener("change", onChange);
  window.addEventListener(EVENT, onChange);
  window.addEventListener("storage", onChange);
  return () => {
    media.removeEventListener("change", onChange);
    window.removeEventListener(EVENT, onChange);
    window.removeEventListener("storage", onChange);
  };
}

export function useTheme() {
  const preference = useSyncExternalStore(subscribe, readPreference, () => "system" as ThemePreference);
  const resolved = useSyncExternalStore(subscribe, () => resolve(readPreference()), () => "light" as const);
  const setPreference = useCallback((next: ThemePreference) => {
    try {
      if (next === "system") localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, next);
    } catch {
      // Private mode without storage: the choice lasts for this page only.
    }
    applyTheme();
    window.dispatchEvent(new Event(EVENT));
  }, []);
  return { preference, resolved, setPreference };
}

const NEXT: Record<ThemePreference, ThemePreference> = { system: "light", light: "dark", dark: "system" };
const LABEL: Record<ThemePreference, string> = { system: "Theme: system", light: "Theme: light", dark: "Theme: dark" };
const ICON: Record<ThemePreference, string> = { system: "◐", light: "☀", dark: "☾" };

/** One button that cycles system → light → dark. */
export function ThemeToggle() {
  const { preference, setPreference } = useTheme();
  return (
    <button
      type="button"
      onClick={() => setPreference(NEXT[preference])}
      data-testid="theme-toggle"
      data-theme={preference}
      aria-label={`${LABEL[preference]} (change)`}
      title={`${LABEL[preference]} — click to change`}
      className="rounded-md px-2 py-1.5 text-sm font-medium text-slate-600 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-brand-600"
    >
      <span aria-hidden>{ICON[preference]}</span>
      <span className="ml-1 hidden xl:inline">{preference === "system" ? "Auto" : preference === "light" ? "Light" : "Dark"}</span>
    </button>
  );
}
