export { nodeFetch, BufferedResponse, ResponseHeaders } from './node-fetch';
export { FetchHeaders } from './headers';
