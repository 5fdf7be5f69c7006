// The light build (no Redis clustering) that the octokit plugins use; its types are the full build's.
declare module 'bottleneck/light.js' {
  import Bottleneck from 'bottleneck';
  export default Bottleneck;
}
