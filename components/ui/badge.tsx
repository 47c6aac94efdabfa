import { cx } from "./cx";

type Tone = "grey" | "blue" | "green" | "red" | "amber";
const tones: Record<Tone, string> = {
  grey: "bg-slate-100 text-slate-700 ring-slate-200",
  blue: "bg-brand-50 text-brand-700 ring-brand-200",
  green: "bg-emerald-50 text-emerald-700 ring-emerald-200",
  red: "bg-red-50 text-red-700 ring-red-200",
  amber: "bg-amber-50 text-amber-800 ring-amber-200",
};

export function Badge({ tone = "grey", className, children, ...rest }: React.HTMLAttributes<HTMLSpanElement> & { tone?: Tone }) {
  return (
    <span className={cx("inline-flex items-center gap-1 rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset", tones[tone], className)} {...rest}>
      {children}
    </span>
  );
}

const statusTone: Record<string, Tone> = { PENDING: "grey", RUNNING: "blue", SUCCESS: "green", FAILED: "red", SKIPPED: "amber" };

export function StatusBadge({ status, testId }: { status: string; testId?: string }) {
  return (
    <Badge tone={statusTone[status] ?? "grey"} data-testid={testId} data-status={status}>
      {status === "RUNNING" && <span className="h-1.5 w-1.5 animate-pulse rounded-full bg-brand-500" />}
      {status.charAt(0) + status.slice(1).toLowerCase()}
    </Badge>
  );
}
