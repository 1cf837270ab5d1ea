export * from './schema';
export * from './load';
export * from './handoff';
export * from './logins';
