// serve_clients.cjs SUITE URL ROFORMER MODEL CLIENTS_DIR — drives a running
// `roformer serve` with the official npm clients installed under
// CLIENTS_DIR (openai, @huggingface/inference), unchanged, and prints one
// line per check: "ok WHAT" or "FAIL WHAT: detail". Expected numbers come
// from the `roformer` CLI on the same model, never from the server.
// tests/serve/test_serve_clients.sh installs the clients, starts the servers and
// counts the lines.
//
// Suites: openai (embeddings.create: default base64 encoding, dimensions,
// an APIError), cls (feature extraction, text classification, sentence
// similarity), mlm (fill-mask), ner (token classification), qa, models (a
// server of a=MODEL and b=MODEL2, the 6th argument: openai choosing each by
// name, models.list, an unknown name; @huggingface/inference through the
// /models/NAME/ prefix).
"use strict";
const { execFileSync } = require("child_process");
const { createRequire } = require("module");
const path = require("path");

const [suite, url, roformer, model, clientsDir, model2] = process.argv.slice(2);
const clientRequire = createRequire(path.resolve(clientsDir, "package.json"));
// every float compared is float32 printed in its shortest round-trip form on
// both sides, from the same arithmetic: the tolerance of tests/serve/serve_client.py
const TOL = 1e-5;
const SENTENCES = ["今天天气很好", "这家酒店的服务很差，房间也很脏", "我们明天去北京"];

function report(what, ok, detail) {
    console.log(ok ? `ok ${what}` : `FAIL ${what}: ${JSON.stringify(detail).slice(0, 300)}`);
}

function cliOn(m, cmd, lines, ...args) {
    const input = lines.map((x) => JSON.stringify(x) + "\n").join("");
    const out = execFileSync(roformer, [cmd, "-m", m, "--no-progress", ...args], { input, timeout: 120000 });
    return out.toString().trim().split("\n").map((l) => JSON.parse(l));
}

function cli(cmd, lines, ...args) {
    return cliOn(model, cmd, lines, ...args);
}

function close(a, b) {
    if (typeof a === "number" && typeof b === "number") return Math.abs(a - b) <= TOL;
    if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => close(x, b[i]));
    if (a && b && typeof a === "object" && typeof b === "object") {
        const ka = Object.keys(a).sort(), kb = Object.keys(b).sort();
        return close(ka, kb) && ka.every((k) => close(a[k], b[k]));
    }
    return a === b;
}

function unit(v) {
    const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    return v.map((x) => x / n);
}

async function check(what, fn) {
    try {
        await fn();
    } catch (e) {
        report(what, false, String(e && e.stack ? e.stack : e));
    }
}

async function suiteOpenai() {
    const OpenAI = clientRequire("openai");
    const client = new OpenAI({ baseURL: url + "/v1", apiKey: "not-checked", maxRetries: 0, timeout: 60000 });
    const raw = cli("embed", SENTENCES.map((text) => ({ text }))).map((e) => e.embedding);
    await check("openai embeddings.create, default encoding (base64 on the wire)", async () => {
        const r = await client.embeddings.create({ model: "tiny", input: SENTENCES });
        const got = r.data.map((d) => d.embedding);
        report("openai embeddings.create, default encoding (base64 on the wire): the CLI's normalized vectors",
            close(got, raw.map(unit)) && r.usage.prompt_tokens > 0, got.map((v) => v.slice(0, 3)));
    });
    await check("openai embeddings.create with dimensions", async () => {
        const r = await client.embeddings.create({ model: "tiny", input: SENTENCES[0], dimensions: 8 });
        report("openai embeddings.create dimensions 8: the CLI's first 8 components, re-normalized",
            close(r.data[0].embedding, unit(raw[0].slice(0, 8))), r.data[0].embedding);
    });
    await check("openai embeddings.create with token ids", async () => {
        const ids = JSON.parse(execFileSync(roformer, ["tokenize", "-m", model], { input: SENTENCES[1] + "\n" }))
            .input_ids;
        const r = await client.embeddings.create({ model: "tiny", input: [ids], encoding_format: "float" });
        report("openai embeddings.create with token ids: the text's vector", close(r.data[0].embedding, unit(raw[1])),
            r.data[0].embedding.slice(0, 3));
    });
    let err = null;
    try {
        await client.embeddings.create({ model: "tiny", input: "x", dimensions: 999 });
    } catch (e) {
        err = e;
    }
    report("openai: dimensions 999 surfaces as APIError (BadRequestError) with status 400 and the message",
        err instanceof OpenAI.APIError && err instanceof OpenAI.BadRequestError && err.status === 400 &&
        err.param === "dimensions" && /dimensions: 999 is more than the model's/.test(err.message),
        err && { name: err.name, status: err.status, message: err.message });
}

function hf(route) {
    const { InferenceClient } = clientRequire("@huggingface/inference");
    return new InferenceClient("", { endpointUrl: url + route });
}

async function suiteCls() {
    await check("hf featureExtraction", async () => {
        const exp = cli("embed", [{ text: SENTENCES[0] }], "--normalize")[0].embedding;
        const got = await hf("/embed").featureExtraction({ inputs: SENTENCES[0] });
        report("@huggingface/inference featureExtraction on /embed: the CLI's normalized vector", close(got, [exp]), got);
    });
    await check("hf textClassification", async () => {
        const exp = cli("classify", [{ text: SENTENCES[1] }])[0].scores;
        const got = await hf("/pipeline/text-classification").textClassification({ inputs: SENTENCES[1] });
        report("@huggingface/inference textClassification on /pipeline/text-classification: the CLI's scores",
            close(got, Object.entries(exp).map(([label, score]) => ({ label, score }))), got);
    });
    await check("hf sentenceSimilarity", async () => {
        const exp = cli("similarity", SENTENCES.slice(1).map((s) => ({ text_a: SENTENCES[0], text_b: s })));
        const got = await hf("/similarity").sentenceSimilarity({
            inputs: { source_sentence: SENTENCES[0], sentences: SENTENCES.slice(1) },
        });
        report("@huggingface/inference sentenceSimilarity on /similarity: the CLI's cosines",
            close(got, exp.map((e) => e.cosine)), got);
    });
}

async function suiteMlm() {
    await check("hf fillMask", async () => {
        const exp = cli("fill-mask", [{ text: "今天[MASK]气很好" }], "--top-k", "3")[0].masks[0];
        const got = await hf("/pipeline/fill-mask").fillMask({ inputs: "今天[MASK]气很好", parameters: { top_k: 3 } });
        report("@huggingface/inference fillMask on /pipeline/fill-mask: the CLI's tokens and scores",
            close(got.map((c) => [c.token, c.token_str, c.score]), exp.map((c) => [c.id, c.token, c.score])) &&
            got.every((c) => c.sequence === `今天 ${c.token_str} 气 很 好`), got);
    });
}

async function suiteNer() {
    await check("hf tokenClassification", async () => {
        const exp = cli("ner", [{ text: "张三在北京工作" }])[0].entities;
        const got = await hf("/pipeline/token-classification").tokenClassification({ inputs: "张三在北京工作" });
        report("@huggingface/inference tokenClassification on /pipeline/token-classification: the CLI's entities",
            close(got.map((e) => [e.entity_group, e.score, e.start, e.end]),
                exp.map((e) => [e.entity, e.score, e.start, e.end])) &&
            got.every((e, i) => e.word === exp[i].text.split("").join(" ")), got);
    });
}

async function suiteQa() {
    await check("hf questionAnswering", async () => {
        const item = { question: "谁在北京", context: "张三在北京工作，李四在上海" };
        const exp = cli("qa", [item])[0];
        const got = await hf("/qa").questionAnswering({ inputs: item });
        report("@huggingface/inference questionAnswering on /qa: the CLI's answer", close(got, exp), got);
    });
}

async function suiteModels() {
    const OpenAI = clientRequire("openai");
    const client = new OpenAI({ baseURL: url + "/v1", apiKey: "not-checked", maxRetries: 0, timeout: 60000 });
    const want = {
        a: cliOn(model, "embed", SENTENCES.map((text) => ({ text }))).map((e) => unit(e.embedding)),
        b: cliOn(model2, "embed", SENTENCES.map((text) => ({ text }))).map((e) => unit(e.embedding)),
    };
    for (const name of ["a", "b"]) {
        await check(`openai embeddings.create model ${name}`, async () => {
            const r = await client.embeddings.create({ model: name, input: SENTENCES });
            report(`openai embeddings.create { model: "${name}" }: that model's vectors, model echoed`,
                close(r.data.map((d) => d.embedding), want[name]) && r.model === name, r.model);
        });
    }
    await check("openai models.list", async () => {
        const ids = [];
        for await (const m of client.models.list()) ids.push(m.id);
        report("openai models.list(): both names", close(ids, ["a", "b"]), ids);
    });
    let err = null;
    try {
        await client.embeddings.create({ model: "zz", input: "x" });
    } catch (e) {
        err = e;
    }
    report("openai: an unknown model is NotFoundError (404) naming the models",
        err instanceof OpenAI.NotFoundError && err.status === 404 && /a, b/.test(err.message),
        err && { name: err.name, status: err.status, message: err.message });
    await check("hf featureExtraction under /models/b/", async () => {
        const got = await hf("/models/b/embed").featureExtraction({ inputs: SENTENCES[0] });
        report("@huggingface/inference featureExtraction on /models/b/embed: b's vector", close(got, [want.b[0]]), got);
    });
    await check("hf textClassification under /models/b/", async () => {
        const exp = cliOn(model2, "classify", [{ text: SENTENCES[1] }])[0].scores;
        const got = await hf("/models/b/pipeline/text-classification").textClassification({ inputs: SENTENCES[1] });
        report("@huggingface/inference textClassification on /models/b/pipeline/text-classification: b's scores",
            close(got, Object.entries(exp).map(([label, score]) => ({ label, score }))), got);
    });
}

const suites = { openai: suiteOpenai, cls: suiteCls, mlm: suiteMlm, ner: suiteNer, qa: suiteQa, models: suiteModels };
suites[suite]().then(() => process.exit(0), (e) => {
    console.error(e);
    process.exit(1);
});
