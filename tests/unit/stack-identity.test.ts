/**
 * The stack's own id in the owner annotation (program/stack-identity.ts, components/common/ownership.ts):
 * two stacks of the same name in two self-managed backends (both report the organization
 * `organization`) are two owners; the program refuses to run without an id, giving a fresh one in
 * the fix; objects with the id-less owner value of earlier releases are refused with the fix that
 * marks them. The cluster's answer is a fixture; tests/e2e runs two real backends on one cluster.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { LiveObjectMeta, OWNER_ANNOTATION, currentStackOwner, ownerTransformation } from "../../components/common/ownership";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { InputError } from "../../lib/problems";
import { Registration, registerComponents, registerProgram, RenderOptions } from "../../render/render";
import { planSharedObjects } from "../../program/preflight";
import { planOfConfig } from "../../program/config-args";
import { stackIdProblem } from "../../program/stack-identity";
import { DEV } from "./helpers";
import { SHOP_RULES } from "./rules.test";

/** Two people's stacks `local`, each in a file backend of its own: same organization, project and name. */
const ID_A = "1f2e3d4c5b6a7988";
const ID_B = "9a8b7c6d5e4f3021";
const OWNER_A = `organization/mesh-ratelimit/local@${ID_A}`;
const OWNER_B = `organization/mesh-ratelimit/local@${ID_B}`;

async function run(opts: Partial<RenderOptions>) {
    const seen: Registration[] = [];
    let error: unknown;
    try {
        await registerProgram({ base: DEV, stack: "local", onRegister: (r) => seen.push(r), onReport: () => undefined, ...opts });
    } catch (e) {
        error = e;
    }
    return { seen, error };
}

const objectsOf = (seen: Registration[]) => seen.filter((r) => r.type.startsWith("kubernetes:"));
const ownerOf = (r: Registration): unknown => r.inputs?.metadata?.annotations?.[OWNER_ANNOTATION];
const meta = (kind: string, name: string, owner: string): LiveObjectMeta => ({
    kind,
    metadata: { name, namespace: "default", annotations: { [OWNER_ANNOTATION]: owner }, labels: { "app.kubernetes.io/part-of": "mesh-ratelimit" } },
});

describe("stack identity: a random stackId in the owner annotation", function () {
    this.timeout(60_000);

    it("the program without stackId: refused under key stackId before anything is registered, the fix giving a fresh random id", async () => {
        const first = await run({ missingStackId: "refuse" });
        const second = await run({ missingStackId: "refuse" });
        expect(first.seen).to.deep.equal([]);
        expect(first.error).to.be.instanceOf(InputError);
        const [p] = (first.error as InputError).problems;
        expect(p!.key).to.equal("stackId");
        expect(p!.problem).to.match(/^the stack has no id of its own/);
        const fresh = /pulumi config set stackId ([0-9a-f]+)\b/.exec(p!.fix)?.[1];
        expect(fresh, p!.fix).to.match(/^[0-9a-f]{16}$/);
        const again = /pulumi config set stackId ([0-9a-f]+)\b/.exec((second.error as InputError).problems[0]!.fix)?.[1];
        expect(again).to.match(/^[0-9a-f]{16}$/);
        expect(again).to.not.equal(fresh);
        // The message as the CLI prints it names the full key.
        expect(String((first.error as Error).message)).to.contain("mesh-ratelimit:stackId");
    });

    it("negative control: the same program with the id it was given registers its objects, each carrying <org>/<project>/<stack>@<id>", async () => {
        const { seen, error } = await run({ missingStackId: "refuse", overrides: { stackId: ID_A } });
        expect(error).to.equal(undefined);
        expect(objectsOf(seen).length).to.be.greaterThan(30);
        expect([...new Set(objectsOf(seen).map(ownerOf))]).to.deep.equal([OWNER_A]);
    });

    it("an id that is not 16 to 64 lowercase hex characters is refused, also in the render", async () => {
        for (const bad of ["0123", "ABCDEF0123456789", "not-a-random-id!", "0".repeat(65)]) {
            const { seen, error } = await run({ overrides: { stackId: bad } });
            expect(error, bad).to.be.instanceOf(InputError);
            expect((error as InputError).problems.map((p) => p.key)).to.deep.equal(["stackId"]);
            expect(seen).to.deep.equal([]);
        }
        expect(stackIdProblem("0".repeat(16))).to.equal(undefined);
        expect(stackIdProblem("a".repeat(64))).to.equal(undefined);
    });

    it("two stacks `local` in two backends: B refuses A's objects before registering anything, naming A's owner value", async () => {
        const { seen, error } = await run({ overrides: { stackId: ID_B }, objects: [meta("ConfigMap", "ratelimit-config", OWNER_A)] });
        expect(error).to.be.instanceOf(InputError);
        const [p] = (error as InputError).problems;
        expect(p!.problem).to.contain(`it belongs to stack ${OWNER_A}`);
        expect(p!.problem).to.contain(`not this stack's (${OWNER_B})`);
        expect(seen).to.deep.equal([]);
    });

    it("negative control: the two stacks given the same id are one owner again (B takes A's object: the collision the id prevents)", async () => {
        const { seen, error } = await run({ overrides: { stackId: ID_A }, objects: [meta("ConfigMap", "ratelimit-config", OWNER_A)] });
        expect(error).to.equal(undefined);
        expect(objectsOf(seen).some((r) => r.inputs.kind === "ConfigMap" && r.inputs.metadata.name === "ratelimit-config")).to.equal(true);
    });

    it("an object with the id-less owner value of earlier releases: refused, never adopted; the fix marks it only if the stack's state lists it", async () => {
        const { seen, error } = await run({ overrides: { stackId: ID_A }, objects: [meta("Deployment", "redis", "organization/mesh-ratelimit/local")] });
        expect(error).to.be.instanceOf(InputError);
        const [p] = (error as InputError).problems;
        expect(p!.key).to.equal("ratelimitNamespace");
        expect(p!.problem).to.contain("carries mesh-ratelimit.io/owner=organization/mesh-ratelimit/local, the owner value without a stack id");
        expect(p!.fix).to.contain(`if this stack's state lists it (pulumi stack export | grep 'redis')`);
        expect(p!.fix).to.contain(`kubectl annotate deployment.apps redis -n default mesh-ratelimit.io/owner=${OWNER_A} --overwrite`);
        expect(p!.fix).to.match(/if it does not, it is another stack's: pulumi config set ratelimitNamespace/);
        expect(seen).to.deep.equal([]);
    });

    it("a shared EnvoyFilter with the id-less owner value: refused too (neither managed nor left)", () => {
        const { settings, global } = planOfConfig(DEV);
        const legacy = meta("EnvoyFilter", "filter-ratelimit", "organization/mesh-ratelimit/local");
        legacy.metadata.namespace = "istio-system";
        const refused = planSharedObjects(settings, [legacy], global, OWNER_A);
        expect(refused.problems.map((p) => p.problem).join("\n")).to.contain(
            "EnvoyFilter istio-system/filter-ratelimit carries mesh-ratelimit.io/owner=organization/mesh-ratelimit/local",
        );
        expect(refused.problems[0]!.fix).to.contain(
            `kubectl annotate envoyfilter.networking.istio.io filter-ratelimit -n istio-system mesh-ratelimit.io/owner=${OWNER_A} --overwrite`,
        );
        // Control: the same object re-annotated with the stack's owner value is managed.
        const marked = { ...legacy, metadata: { ...legacy.metadata, annotations: { [OWNER_ANNOTATION]: OWNER_A } } };
        const managed = planSharedObjects(settings, [marked], global, OWNER_A);
        expect(managed.problems).to.deep.equal([]);
        expect(managed.decisions.find((d) => d.ref.name === "filter-ratelimit")!.action).to.equal("manage");
    });

    it("the committed dev stack config holds no stackId (everyone who clones it would share one owner)", () => {
        const file = parse(fs.readFileSync(path.join(__dirname, "..", "..", "Pulumi.dev.yaml"), "utf8")) as { config?: Record<string, unknown> };
        expect(Object.keys(file.config ?? {})).to.not.include("mesh-ratelimit:stackId");
        expect(Object.keys(file.config ?? {}).length).to.be.greaterThan(0);
    });

    it("the package: currentStackOwner(id) and ownerTransformation put the id in a component's objects", async () => {
        const { objects } = await registerComponents(
            () =>
                void new GlobalRateLimit(
                    "limits",
                    { domain: "shop", gateway: { selector: { app: "gw" }, namespace: "shop", virtualHosts: ["*:80"] }, namespace: "shop", rules: SHOP_RULES },
                    { transformations: [ownerTransformation(currentStackOwner(ID_B))] },
                ),
            "shop",
            "local",
        );
        expect([...new Set(objects.map((o) => o.metadata.annotations?.[OWNER_ANNOTATION]))]).to.deep.equal([`organization/shop/local@${ID_B}`]);
    });
});
