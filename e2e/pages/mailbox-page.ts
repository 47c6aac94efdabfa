import { expect, type Locator, type Page } from "@playwright/test";

export class MailboxPage {
  constructor(private readonly page: Page) {}

  async goto(recipient?: string) {
    await this.page.goto("/mailbox");
    if (recipient) await this.page.getByTestId("mailbox-filter").fill(recipient);
  }

  items(recipient?: string): Locator {
    const all = this.page.getByTestId("mailbox-item");
    return recipient ? all.filter({ has: this.page.getByTestId("mailbox-item-to").getByText(recipient, { exact: true }) }) : all;
  }

  /** Opens the newest email to `email` and reads the 6-digit code out of it. */
  async readOtp(email: string): Promise<string> {
    await this.goto(email);
    const item = this.items(email).first();
    await expect(item).toBeVisible();
    await item.click();
    const text = await this.page.getByTestId("mailbox-message").innerText();
    const code = /\b(\d{6})\b/.exec(text)?.[1];
    expect(code, `a 6-digit code in: ${text}`).toBeTruthy();
    return code!;
  }
}
