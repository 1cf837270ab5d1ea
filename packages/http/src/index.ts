export { nodeFetch, BufferedResponse, ResponseHeaders } from './node-fetch';
