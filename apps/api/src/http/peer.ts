/** What the runtime knows of a request beyond the Request itself. */
export interface Peer {
  /** The client's address as the socket saw it. */
  clientIp?: string | undefined;
}
