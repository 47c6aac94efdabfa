"use client";
import { useRef, useState } from "react";
import { uploadCsv } from "@/lib/client/upload";
import type { UploadMeta } from "@/lib/client/types";
import { ErrorAlert, cx } from "@/components/ui";

/**
 * Drag a CSV here (or click to choose): uploads it in resumable 4 MiB pieces (tus) with a progress bar; a dropped
 * connection resumes on its own, and an invalid CSV shows the server's message with its line number.
 */
export function CsvDropzone({ onUploaded }: { onUploaded: (upload: UploadMeta) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function send(file: File | undefined) {
    if (!file) return;
    setError(null);
    setProgress(0);
    try {
      onUploaded(await uploadCsv(file, setProgress));
    } catch (e) {
      setError(e);
    } finally {
      setProgress(null);
      if (input.current) input.current.value = "";
    }
  }

  return (
    <div className="space-y-3">
      <div
        role="button"
        tabIndex={0}
        data-testid="upload-dropzone"
        onClick={() => input.current?.click()}
        onKeyDown={(e) => (e.key === "Enter" || e.key === " ") && input.current?.click()}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          void send(e.dataTransfer.files[0]);
        }}
        className={cx(
          "flex cursor-pointer flex-col items-center justify-center rounded-xl border-2 border-dashed px-6 py-10 text-center transition-colors",
          over ? "border-brand-400 bg-brand-50" : "border-slate-300 bg-white hover:border-brand-300 hover:bg-slate-50",
        )}
      >
        <svg viewBox="0 0 24 24" className="mb-3 h-10 w-10 text-slate-400" fill="none" stroke="currentColor" strokeWidth="1.5" aria-hidden="true">
          <path d="M12 16V4m0 0-4 4m4-4 4 4M4 16v2a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-2" strokeLinecap="round" strokeLinejoin="round" />
        </svg>
        <p className="text-sm font-medium text-slate-800">Drop a CSV file here, or click to choose one</p>
        <p className="mt-1 text-xs text-slate-500">The first row is the header. Comma, semicolon and tab are detected.</p>
        <input ref={input} type="file" accept=".csv,text/csv" className="hidden" data-testid="upload-input" onChange={(e) => void send(e.target.files?.[0])} />
      </div>
      {progress !== null && (
        <div data-testid="upload-progress" aria-label="Upload progress">
          <div className="mb-1 flex justify-between text-xs text-slate-600">
            <span>Uploading…</span>
            <span>{Math.round(progress * 100)}%</span>
          </div>
          <div
            className="h-2 overflow-hidden rounded-full bg-slate-200"
            role="progressbar"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={Math.round(progress * 100)}
            data-testid="upload-progress-bar"
          >
            <div className="h-full rounded-full bg-brand-600 transition-all" style={{ width: `${progress * 100}%` }} />
          </div>
        </div>
      )}
      <ErrorAlert error={error} testId="upload-error" />
    </div>
  );
}
