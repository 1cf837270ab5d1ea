export * from './errors';
export * from './pipeline/labels';
export * from './pipeline/transitions';
export * from './state/index';
export * from './triage/index';
export * from './cost/index';
export * from './config/index';
export * from './router/index';
