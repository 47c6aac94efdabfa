import type { Metadata } from "next";
import { ApiReference } from "@/components/api-docs/api-reference";

export const metadata: Metadata = { title: "API reference" };

export default function ApiDocsPage() {
  return <ApiReference />;
}
