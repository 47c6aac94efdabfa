import { expect, type Page } from "@playwright/test";

export class RegisterPage {
  constructor(private readonly page: Page) {}

  async goto() {
    await this.page.goto("/register");
    await expect(this.page.getByTestId("register-form")).toHaveAttribute("data-ready", "true");
  }

  async register(account: { fullName: string; email: string; password: string }) {
    await this.page.getByTestId("register-name").fill(account.fullName);
    await this.page.getByTestId("register-email").fill(account.email);
    await this.page.getByTestId("register-password").fill(account.password);
    await this.page.getByTestId("register-submit").click();
    // The first request may compile the route on a dev server: allow for it.
    await expect(this.page).toHaveURL(/\/verify\?email=/, { timeout: 60_000 });
  }
}

export class VerifyPage {
  constructor(private readonly page: Page) {}

  async goto(email: string) {
    await this.page.goto(`/verify?email=${encodeURIComponent(email)}`);
    await expect(this.page.getByTestId("verify-form")).toHaveAttribute("data-ready", "true");
  }

  /** Pastes the code into the first box, as a person copying it from the email would. */
  async pasteCode(code: string) {
    const first = this.page.getByTestId("otp-digit-0");
    await first.focus();
    await this.page.evaluate((text) => {
      const data = new DataTransfer();
      data.setData("text", text);
      document.activeElement?.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    }, code);
  }

  async typeCode(code: string) {
    await this.page.getByTestId("otp-digit-0").click();
    await this.page.keyboard.type(code);
  }
}

export class LoginPage {
  constructor(private readonly page: Page) {}

  async goto() {
    await this.page.goto("/login");
    await expect(this.page.getByTestId("login-form")).toHaveAttribute("data-ready", "true");
  }

  async login(email: string, password: string) {
    await this.page.getByTestId("login-email").fill(email);
    await this.page.getByTestId("login-password").fill(password);
    await this.page.getByTestId("login-submit").click();
  }
}
