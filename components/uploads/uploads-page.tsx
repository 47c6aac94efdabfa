"use client";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "@/lib/client/api";
import { keys, useUpload, useUploads } from "@/lib/client/hooks";
import { Badge, Button, Card, CardHeader, EmptyState, ErrorAlert, PageHeader, PageSpinner, cx, formatBytes, timeAgo } from "@/components/ui";
import { PageContainer } from "@/components/shell/app-shell";
import { CsvDropzone } from "./csv-dropzone";
import { DataTable } from "./data-table";

export function UploadsPage() {
  const queryClient = useQueryClient();
  const uploads = useUploads();
  const [selected, setSelected] = useState<string | null>(null);
  const [deleteError, setDeleteError] = useState<unknown>(null);
  const items = uploads.data?.items ?? [];
  const current = selected ?? items[0]?.uploadId ?? null;

  async function remove(id: string) {
    setDeleteError(null);
    try {
      await api.del(`/api/uploads/${id}`);
      if (selected === id) setSelected(null);
      await queryClient.invalidateQueries({ queryKey: keys.uploads });
    } catch (e) {
      setDeleteError(e);
    }
  }

  return (
    <PageContainer wide>
      <PageHeader title="Uploads" description="CSV files your DATA_SOURCE nodes read. Every cell stays text; the first row names the columns." />
      {/* grid-cols-1 (minmax(0, 1fr)) and min-w-0: a wide preview table scrolls inside its card instead of widening the page. */}
      <div className="grid grid-cols-1 gap-6 lg:grid-cols-[20rem_minmax(0,1fr)]">
        <div className="min-w-0 space-y-4">
          <CsvDropzone
            onUploaded={(upload) => {
              setSelected(upload.uploadId);
              void queryClient.invalidateQueries({ queryKey: keys.uploads });
            }}
          />
          <ErrorAlert error={uploads.error ?? deleteError} />
          {uploads.isPending ? (
            <PageSpinner />
          ) : (
            <ul className="space-y-2" data-testid="upload-list">
              {items.map((u) => (
                <li key={u.uploadId}>
                  <button
                    onClick={() => setSelected(u.uploadId)}
                    data-testid="upload-item"
                    className={cx(
                      "w-full rounded-lg px-4 py-3 text-left ring-1 transition-colors",
                      u.uploadId === current ? "bg-brand-50 ring-brand-300" : "bg-white ring-slate-200 hover:bg-slate-50",
                    )}
                  >
                    <p className="truncate text-sm font-medium text-slate-900">{u.filename}</p>
                    <p className="mt-0.5 text-xs text-slate-500">
                      {u.rowCount.toLocaleString()} rows · {u.columns.length} columns · {formatBytes(u.sizeBytes)} · {timeAgo(u.createdAt)}
                    </p>
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
        {current ? (
          <UploadPreview id={current} onDelete={() => void remove(current)} />
        ) : (
          !uploads.isPending && (
            <EmptyState
              testId="uploads-empty"
              title="No uploads yet"
              description="Drop a CSV file on the left. You will see its columns and first rows here, and can pick it in a DATA_SOURCE node."
            />
          )
        )}
      </div>
    </PageContainer>
  );
}

function UploadPreview({ id, onDelete }: { id: string; onDelete: () => void }) {
  const { data, error, isPending } = useUpload(id);
  if (isPending) return <PageSpinner />;
  if (error || !data) return <ErrorAlert error={error} />;
  return (
    <Card className="min-w-0" data-testid="upload-preview">
      <CardHeader
        title={<span data-testid="preview-filename">{data.filename}</span>}
        description={
          <span className="flex flex-wrap items-center gap-2">
            <Badge tone="blue" data-testid="preview-row-count">{data.rowCount.toLocaleString()} rows</Badge>
            <Badge data-testid="preview-column-count">{data.columns.length} columns</Badge>
            <span className="font-mono text-xs text-slate-400">{data.uploadId}</span>
          </span>
        }
        actions={
          <Button variant="danger" size="sm" onClick={onDelete} data-testid="upload-delete">
            Delete
          </Button>
        }
      />
      <div className="p-5">
        <p className="mb-3 text-xs text-slate-500">
          {data.preview.length < data.rowCount ? `First ${data.preview.length} of ${data.rowCount.toLocaleString()} rows.` : "All rows."}
        </p>
        {data.columns.length > 0 && <DataTable columns={data.columns} rows={data.preview} testId="preview-table" />}
      </div>
    </Card>
  );
}
