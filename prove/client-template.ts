/**
 * Request plans shared by every IPv4 client: when a client's address reaches a descriptor only as
 * itself (a `remote_address` action, or a `masked_remote_address` action whose IPv4 mask keeps all
 * 32 bits, as a per-client rule renders), a plan made for a stand-in address serves every IPv4
 * client with its address swapped in. A log of a hundred thousand clients is then planned once per
 * request shape, not once per client. A shorter IPv4 mask (a client prefix or CIDR) makes the plan
 * depend on the address itself: such programs, and IPv6 clients, are planned per client.
 */
import { K8sObject } from "../lib/k8s-object";
import { DescriptorExplanation, Entry } from "../gateway-model/model";
import { ipv4MaskLengths } from "../gateway-model/client-address";

/** The stand-in client address of a shared plan (a documentation address, RFC 5737). */
export const STAND_IN_CLIENT = "192.0.2.253";

/** Whether the program's plans can be shared by IPv4 clients (no action reads a part of an IPv4 address). */
export function plansShareable(objects: K8sObject[]): boolean {
    return ipv4MaskLengths(objects).every((n) => n === 32);
}

const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
/** A dotted quad without leading zeros: the form the model writes an IPv4 address in. */
const CANONICAL_IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

/** Whether a client's plan is the shared one with its address swapped in: an IPv4 address written as the model writes it. */
export function sharesPlan(client: string): boolean {
    return CANONICAL_IPV4.test(client);
}

/** A plan's parts that hold a client's address. */
interface ClientParts {
    filters?: { descriptors: DescriptorExplanation[] }[];
    preDescriptors?: Entry[][];
    notes: string[];
}

const MASKED = `${STAND_IN_CLIENT}/32`;
const holdsClient = (e: Entry) => e.value === STAND_IN_CLIENT || e.value === MASKED;

function swapEntries(entries: Entry[], client: string): Entry[] {
    if (!entries.some(holdsClient)) return entries;
    return entries.map((e) => (holdsClient(e) ? { key: e.key, value: e.value === MASKED ? `${client}/32` : client } : e));
}

function swapDescriptor(d: DescriptorExplanation, client: string): DescriptorExplanation {
    const entries = swapEntries(d.entries, client);
    if (entries === d.entries) return d;
    const out: DescriptorExplanation = { ...d, entries };
    if (d.bucket !== undefined) out.bucket = d.bucket.split(STAND_IN_CLIENT).join(client);
    return out;
}

/** The plan made for STAND_IN_CLIENT, for `client`: its entries, counter keys and notes with the address swapped. */
export function withClient<P extends ClientParts>(plan: P, client: string): P {
    if (client === STAND_IN_CLIENT) return plan;
    const out: P = { ...plan, notes: plan.notes.map((n) => n.split(STAND_IN_CLIENT).join(client)) };
    if (plan.filters) out.filters = plan.filters.map((f) => ({ ...f, descriptors: f.descriptors.map((d) => swapDescriptor(d, client)) }));
    if (plan.preDescriptors) out.preDescriptors = plan.preDescriptors.map((e) => swapEntries(e, client));
    return out;
}
