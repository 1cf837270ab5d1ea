export { nodeFetch, BufferedResponse, ResponseHeaders } from './node-fetch';
export { FetchHeaders, useFetchGlobals } from './headers';
