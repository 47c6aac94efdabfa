"use client";
import Link from "next/link";
import { useSenders } from "@/lib/client/senders";
import { Field, Select } from "@/components/ui";
import { issueFor, patch, type Config, type Issue } from "./form-fields";

/** OUTPUT's sender: one of the account's senders, or (empty) the account's default, else the server's transport. */
export function SenderPicker({ config, onChange, issues }: { config: Config; issues: Issue[]; onChange: (config: Config) => void }) {
  const senders = useSenders();
  const items = senders.data?.items ?? [];
  const fallback = items.find((s) => s.isDefault);
  return (
    <Field
      label="Send through"
      error={issueFor(issues, "senderId")}
      hint={<Link href="/settings" className="text-brand-600">Manage senders →</Link>}
    >
      {(id) => (
        <Select id={id} value={String(config.senderId ?? "")} onChange={(e) => onChange(patch(config, "senderId", e.target.value))} data-testid="output-sender">
          <option value="">{fallback ? `Account default (${fallback.name})` : "The server's email transport"}</option>
          {items.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name} — {s.from}
            </option>
          ))}
        </Select>
      )}
    </Field>
  );
}
