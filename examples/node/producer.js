// Publish one signed ArtifactSubmitted event to secondbrain from Node.js (avsc + kafkajs).
//
//   npm install && SB_PRODUCER_KEY=sb_... SB_KAFKA_BOOTSTRAP=127.0.0.1:9092 node producer.js "some text"
//
// Environment: SB_KAFKA_BOOTSTRAP (the address `secondbrain up` prints), SB_PRODUCER_KEY (an API key
// of the user; `--scope producer` is enough), SB_USER_ID (default "local"), SB_SCHEMA_FILE (default
// schemas/artifact_submitted.v1.avsc) and, for an Apache Kafka cluster, SB_KAFKA_SECURITY_PROTOCOL,
// SB_KAFKA_SASL_MECHANISM, SB_KAFKA_SASL_USERNAME, SB_KAFKA_SASL_PASSWORD and SB_KAFKA_SSL_CAFILE.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const avro = require('avsc');
const { Kafka, Partitioners, logLevel } = require('kafkajs');

const env = process.env;
const schemaText = fs.readFileSync(env.SB_SCHEMA_FILE || 'schemas/artifact_submitted.v1.avsc', 'utf8');
// Timestamps (timestamp-micros) are written as plain longs: microseconds since the epoch, UTC.
const type = avro.Type.forSchema(JSON.parse(schemaText));

// CRC-64-AVRO (the Avro specification's fingerprint) of the schema's Parsing Canonical Form
// (what avsc's getSchema() returns, serialised).
const EMPTY = 0xc15d213aa4d7a795n;
const TABLE = Array.from({ length: 256 }, (_, i) => {
  let fp = BigInt(i);
  for (let j = 0; j < 8; j++) fp = (fp >> 1n) ^ (EMPTY & -(fp & 1n));
  return fp;
});
function crc64avro(bytes) {
  let fp = EMPTY;
  for (const b of bytes) fp = (fp >> 8n) ^ TABLE[Number((fp ^ BigInt(b)) & 0xffn)];
  return fp;
}

// Single-object encoding: C3 01, the fingerprint (8 bytes, little endian), the Avro body.
const header = Buffer.alloc(10);
header.writeUInt16BE(0xc301, 0);
header.writeBigUInt64LE(crc64avro(Buffer.from(JSON.stringify(type.getSchema()), 'utf8')), 2);
const encode = (record) => Buffer.concat([header, type.toBuffer(record)]);

// sb-key-id: the <id> of sb_<id>_<secret>; sb-signature: "v1=" + HMAC-SHA256 of the value, keyed with SHA-256(key).
function signed(value, apiKey) {
  const secret = crypto.createHash('sha256').update(apiKey).digest();
  const mac = crypto.createHmac('sha256', secret).update(value).digest('hex');
  return { 'sb-key-id': apiKey.split('_')[1], 'sb-signature': `v1=${mac}` };
}

// Plain on the local broker; SASL and/or TLS for a cluster.
function kafkaConfig() {
  const protocol = env.SB_KAFKA_SECURITY_PROTOCOL || 'PLAINTEXT';
  const config = { clientId: 'app-calendar', brokers: (env.SB_KAFKA_BOOTSTRAP || '127.0.0.1:9092').split(','),
                   logLevel: logLevel.WARN };
  if (protocol === 'SSL' || protocol === 'SASL_SSL') {
    config.ssl = env.SB_KAFKA_SSL_CAFILE ? { ca: [fs.readFileSync(env.SB_KAFKA_SSL_CAFILE, 'utf8')] } : true;
  }
  if (protocol.startsWith('SASL_')) {
    config.sasl = { mechanism: (env.SB_KAFKA_SASL_MECHANISM || 'SCRAM-SHA-512').toLowerCase(),
                    username: env.SB_KAFKA_SASL_USERNAME, password: env.SB_KAFKA_SASL_PASSWORD };
  }
  return config;
}

async function main() {
  const apiKey = env.SB_PRODUCER_KEY;
  if (!apiKey) throw new Error('set SB_PRODUCER_KEY to an API key of the user (sb_<id>_<secret>)');
  const userId = env.SB_USER_ID || 'local';
  const body = Buffer.from(process.argv[2] || 'Call with the plumber: the boiler is serviced on Friday.', 'utf8');
  const record = {
    schema_version: 1,
    event_id: crypto.randomUUID(),    // your idempotency key: reuse it when you retry
    job_id: null,                     // derived from event_id by secondbrain
    user_id: userId,
    source_uri: 'notes-app:note-17',
    source_id: null,
    artifact_id: null,
    content_type: 'text/plain',
    filename: null,
    title: 'Boiler service',
    object_key: null,
    content: body,                    // exactly one of content / object_key
    size_bytes: body.length,
    sha256: crypto.createHash('sha256').update(body).digest('hex'),
    captured_at: Date.UTC(2024, 6, 2, 9, 30) * 1000,
    submitted_at: Date.now() * 1000,
    producer: 'app:notes-node',
    attributes: { app: 'notes' },
  };
  const value = encode(record);
  // Java-compatible partitioning (as the Python clients): one user's events stay on one partition.
  // Not idempotent: the local broker refuses idempotent producers; event_id makes retries harmless.
  const producer = new Kafka(kafkaConfig()).producer({ createPartitioner: Partitioners.DefaultPartitioner,
                                                       idempotent: false, allowAutoTopicCreation: false });
  await producer.connect();
  try {
    await producer.send({
      topic: 'artifacts.submitted',
      acks: -1,
      messages: [{
        key: userId,
        value,
        headers: { 'sb-schema': 'artifact_submitted', 'sb-schema-version': '1',
                   'content-type': 'application/vnd.secondbrain.avro', ...signed(value, apiKey) },
      }],
    });
  } finally {
    await producer.disconnect();
  }
  console.log(record.event_id);
}

main().catch((err) => { console.error(`error: ${err.message}`); process.exit(1); });
