import type { Metadata } from "next";
import "./globals.css";
import { THEME_SCRIPT } from "@/components/shell/theme";
import { Providers } from "./providers";

export const metadata: Metadata = {
  title: { default: "Flowmail", template: "%s · Flowmail" },
  description: "Draw a workflow, run it, and send one email per row.",
  icons: { icon: [{ url: "/favicon.svg", type: "image/svg+xml" }] },
};

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    // The theme script sets the `dark` class before React hydrates, hence the warning suppression on <html>.
    <html lang="en" suppressHydrationWarning>
      <head>
        <script dangerouslySetInnerHTML={{ __html: THEME_SCRIPT }} />
      </head>
      <body className="min-h-screen font-sans">
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
