import { ApiError, errorMessage } from "@/lib/client/api";
import { cx } from "./cx";
import { humanize } from "./format";

export function Alert({ tone = "red", title, children, className, testId }: {
  tone?: "red" | "green" | "blue" | "amber";
  title?: string;
  children?: React.ReactNode;
  className?: string;
  testId?: string;
}) {
  const tones = {
    red: "bg-red-50 text-red-800 ring-red-200",
    green: "bg-emerald-50 text-emerald-800 ring-emerald-200",
    blue: "bg-brand-50 text-brand-800 ring-brand-200",
    amber: "bg-amber-50 text-amber-900 ring-amber-200",
  };
  return (
    <div role={tone === "red" ? "alert" : "status"} data-testid={testId} className={cx("rounded-lg px-4 py-3 text-sm ring-1 ring-inset", tones[tone], className)}>
      {title && <p className="font-medium">{title}</p>}
      {children && <div className={title ? "mt-1" : undefined}>{children}</div>}
    </div>
  );
}

const MAX_LISTED = 6;

/** Shows an error from the API in words: its detail, and the per-field messages not shown elsewhere. */
export function ErrorAlert({ error, testId = "error", className, hideFieldErrors }: {
  error: unknown;
  testId?: string;
  className?: string;
  hideFieldErrors?: boolean;
}) {
  if (!error) return null;
  const fieldErrors = error instanceof ApiError && !hideFieldErrors ? error.errors : [];
  return (
    <Alert testId={testId} className={className}>
      <p>{humanize(errorMessage(error))}</p>
      {fieldErrors.length > 0 && (
        <ul className="mt-1 list-disc pl-5">
          {fieldErrors.slice(0, MAX_LISTED).map((e, i) => (
            <li key={i}>{humanize(e.message)}</li>
          ))}
          {fieldErrors.length > MAX_LISTED && <li>…and {fieldErrors.length - MAX_LISTED} more</li>}
        </ul>
      )}
    </Alert>
  );
}
