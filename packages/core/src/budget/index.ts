export * from './day-ledger';
export * from './day-ledger-codec';
export * from './day-limits';
export * from './day-summary';
