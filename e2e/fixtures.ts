import { randomBytes } from "node:crypto";
import { test as base, expect, type Page } from "@playwright/test";
import { LoginPage, RegisterPage, VerifyPage } from "./pages/auth-pages";
import { EditorPage } from "./pages/editor-page";
import { MailboxPage } from "./pages/mailbox-page";
import { UploadsPage } from "./pages/uploads-page";

export interface TestAccount {
  fullName: string;
  email: string;
  password: string;
}

interface Fixtures {
  registerPage: RegisterPage;
  verifyPage: VerifyPage;
  loginPage: LoginPage;
  mailbox: MailboxPage;
  uploads: UploadsPage;
  editor: EditorPage;
  newAccount: TestAccount;
  /** A registered, verified account whose browser session is open. */
  signedIn: TestAccount;
  shot: (name: string) => Promise<void>;
}

export const uniqueEmail = (label: string) => `${label}-${randomBytes(4).toString("hex")}@example.com`;

/** Registers through the UI, reads the code from the mailbox page and verifies: the whole onboarding. */
export async function onboard(page: Page, account: TestAccount) {
  const register = new RegisterPage(page);
  await register.goto();
  await register.register(account);
  const code = await new MailboxPage(page).readOtp(account.email);
  const verify = new VerifyPage(page);
  await verify.goto(account.email);
  await verify.pasteCode(code);
  await expect(page).toHaveURL(/\/workflows$/);
}

export const test = base.extend<Fixtures>({
  registerPage: async ({ page }, use) => use(new RegisterPage(page)),
  verifyPage: async ({ page }, use) => use(new VerifyPage(page)),
  loginPage: async ({ page }, use) => use(new LoginPage(page)),
  mailbox: async ({ page }, use) => use(new MailboxPage(page)),
  uploads: async ({ page }, use) => use(new UploadsPage(page)),
  editor: async ({ page }, use) => use(new EditorPage(page)),
  newAccount: async ({}, use) => use({ fullName: "Ada Tester", email: uniqueEmail("ada"), password: "correct horse battery" }),
  signedIn: async ({ page, newAccount }, use) => {
    await onboard(page, newAccount);
    await use(newAccount);
  },
  shot: async ({ page }, use) => {
    await use(async (name) => {
      await page.screenshot({ path: `e2e/screenshots/${name}.png`, fullPage: true });
    });
  },
});

export { expect };
