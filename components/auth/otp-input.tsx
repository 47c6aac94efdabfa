"use client";
import { useRef } from "react";
import { cx } from "@/components/ui";

const LENGTH = 6;

/** Six one-digit boxes: typing moves forward, Backspace moves back, pasting a code fills every box. */
export function OtpInput({ value, onChange, onComplete, invalid }: {
  value: string;
  onChange: (value: string) => void;
  onComplete?: (value: string) => void;
  invalid?: boolean;
}) {
  const refs = useRef<(HTMLInputElement | null)[]>([]);
  const digits = Array.from({ length: LENGTH }, (_, i) => value[i] ?? "");

  function update(next: string) {
    const clean = next.replace(/\D/g, "").slice(0, LENGTH);
    onChange(clean);
    if (clean.length === LENGTH) onComplete?.(clean);
    return clean;
  }

  function typeAt(index: number, raw: string) {
    const typed = raw.replace(/\D/g, "");
    if (!typed) return;
    // More than one digit arriving in one box is autofill or a paste: spread it from this box on.
    const next = (value.slice(0, index) + typed + value.slice(index + typed.length)).slice(0, LENGTH);
    const clean = update(next);
    refs.current[Math.min(index + typed.length, LENGTH - 1, clean.length)]?.focus();
  }

  function keyDown(index: number, event: React.KeyboardEvent<HTMLInputElement>) {
    if (event.key === "Backspace") {
      event.preventDefault();
      if (digits[index]) update(value.slice(0, index) + value.slice(index + 1));
      else if (index > 0) {
        update(value.slice(0, index - 1) + value.slice(index));
        refs.current[index - 1]?.focus();
      }
    } else if (event.key === "ArrowLeft" && index > 0) refs.current[index - 1]?.focus();
    else if (event.key === "ArrowRight" && index < LENGTH - 1) refs.current[index + 1]?.focus();
  }

  function paste(event: React.ClipboardEvent<HTMLInputElement>) {
    event.preventDefault();
    const clean = update(event.clipboardData.getData("text"));
    refs.current[Math.min(clean.length, LENGTH - 1)]?.focus();
  }

  return (
    <div className="flex justify-between gap-2" data-testid="otp-input">
      {digits.map((digit, i) => (
        <input
          key={i}
          ref={(el) => {
            refs.current[i] = el;
          }}
          value={digit}
          onChange={(e) => typeAt(i, e.target.value)}
          onKeyDown={(e) => keyDown(i, e)}
          onPaste={paste}
          onFocus={(e) => e.target.select()}
          inputMode="numeric"
          autoComplete={i === 0 ? "one-time-code" : "off"}
          maxLength={LENGTH}
          aria-label={`Digit ${i + 1} of ${LENGTH}`}
          data-testid={`otp-digit-${i}`}
          className={cx(
            "h-14 w-12 rounded-lg border-0 text-center font-mono text-2xl font-semibold shadow-sm ring-1 ring-inset",
            "focus:ring-2 focus:ring-brand-500 focus:outline-none",
            invalid ? "ring-red-400" : "ring-slate-300",
          )}
        />
      ))}
    </div>
  );
}
