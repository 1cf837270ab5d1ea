/**
 * Error taxonomy. A UserError is a mistake the user can fix (config, inputs, permissions) and is reported as such;
 * anything else that escapes is a HydraFlow bug. CreditExhaustedError must never be swallowed by a broad catch:
 * it always propagates and pauses the pipeline (field notes: billing errors were silently retried before).
 */
export class HydraflowError extends Error {
  override name = 'HydraflowError';
}

/** A mistake in the user's config, inputs or repository setup. Message names the value and what was expected. */
export class UserError extends HydraflowError {
  override name = 'UserError';
}

/** The model provider says the account is out of credit or billing is disabled. Never retried. */
export class CreditExhaustedError extends HydraflowError {
  override name = 'CreditExhaustedError';
  constructor(
    message: string,
    readonly provider: string,
  ) {
    super(message);
  }
}

/** A per-run, per-issue or per-day budget would be exceeded by the next call. */
export class BudgetExceededError extends HydraflowError {
  override name = 'BudgetExceededError';
  constructor(
    message: string,
    readonly scope: 'run' | 'issue' | 'day',
    readonly limit: { tokens?: number; usd?: number },
  ) {
    super(message);
  }
}

/**
 * A limit of the whole repository's day is reached (budgets.per_day): the day's spend, the author's issues started
 * today, or a spend ledger HydraFlow cannot trust. Not a failure of the issue: it pauses until the next UTC day.
 */
export class DailyLimitError extends BudgetExceededError {
  override name = 'DailyLimitError';
  constructor(
    message: string,
    readonly reason: 'day' | 'author' | 'ledger',
    limit: { usd?: number } = {},
  ) {
    super(message, 'day', limit);
  }
}

/** The model's answer could not be parsed into the expected shape, even after the repair attempt. */
export class ModelOutputError extends HydraflowError {
  override name = 'ModelOutputError';
  constructor(
    message: string,
    readonly raw: string,
  ) {
    super(message);
  }
}

/**
 * The server could not parse the model's reply itself — llama.cpp's HTTP 500 "The model produced output that does not
 * match the expected … format": a bad answer, repaired like one (once), never retried blindly at full generation cost.
 * There is no raw text: the server kept it.
 */
export class OutputFormatError extends ModelOutputError {
  override name = 'OutputFormatError';
  constructor(message: string) {
    super(message, '');
  }
}

/** The provider kept failing (5xx, 429, timeouts) after every retry. */
export class ProviderUnavailableError extends HydraflowError {
  override name = 'ProviderUnavailableError';
}

/** The provider refused the credentials (HTTP 401/403): a key the user must fix. */
export class ProviderAuthError extends UserError {
  override name = 'ProviderAuthError';
}

/** The provider rejected the request itself (another 4xx): no retry can help, a human must look. */
export class ProviderRequestError extends HydraflowError {
  override name = 'ProviderRequestError';
}

/**
 * The model call failed at the provider (unavailable after retries, credentials refused, request rejected): the
 * failure says nothing about the issue, so it is never turned into a question for the author.
 */
export function isProviderError(error: unknown): boolean {
  return (
    error instanceof ProviderUnavailableError ||
    error instanceof ProviderAuthError ||
    error instanceof ProviderRequestError
  );
}

/**
 * Errors that must stop the pipeline and be shown to a human rather than retried or escalated silently: the one check
 * every catch that stops spending makes (a phase then calls `stopSpending`, src/phases/pause.ts).
 */
export function isFatal(error: unknown): error is CreditExhaustedError | BudgetExceededError {
  return error instanceof CreditExhaustedError || error instanceof BudgetExceededError;
}
