export * from './brief';
export * from './completeness';
