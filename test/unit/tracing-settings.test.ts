/**
 * When the OTEL_* variables turn tracing on, and what a bad setting says; the short codes tool
 * spans carry for failed calls.
 */
import { toolErrorCode } from '../../activities/tools/activity-wrapper';
import { TracingConfigError, tracingSettingsFromEnv } from '../../worker/tracing';

test('tracing settings: off by default, on with an OTLP endpoint or a named exporter', () => {
  expect(tracingSettingsFromEnv({})).toBeUndefined();
  expect(tracingSettingsFromEnv({ OTEL_SERVICE_NAME: 'x' })).toBeUndefined();
  expect(tracingSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' })).toEqual({
    exporters: ['otlp'],
    serviceName: 'loopwright',
    otlpUrl: 'http://localhost:4318/v1/traces',
  });
  expect(tracingSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4318/', OTEL_SERVICE_NAME: 'agents' })).toMatchObject({
    serviceName: 'agents',
    otlpUrl: 'https://collector:4318/v1/traces',
  });
  // The signal's own endpoint is used as it is.
  expect(tracingSettingsFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom/path' })?.otlpUrl).toBe('http://c:4318/custom/path');
  expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: 'otlp' })?.otlpUrl).toBe('http://localhost:4318/v1/traces');
  expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: 'console' })).toEqual({ exporters: ['console'], serviceName: 'loopwright' });
  expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: 'otlp, console' })?.exporters).toEqual(['otlp', 'console']);
  expect(tracingSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })?.exporters).toEqual(['otlp']);
});

test('tracing settings: OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off', () => {
  expect(tracingSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
  expect(tracingSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
  expect(tracingSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'false' })).toBeDefined();
  expect(tracingSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
  // A bad setting does not matter when tracing is disabled anyway.
  expect(tracingSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
});

test('tracing settings: a bad setting is an error naming the variable', () => {
  const problem = (env: NodeJS.ProcessEnv): string => {
    try {
      tracingSettingsFromEnv(env);
    } catch (error) {
      expect(error).toBeInstanceOf(TracingConfigError);
      return (error as Error).message;
    }
    throw new Error('no error');
  };
  expect(problem({ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost 4318' })).toMatch(/^OTEL_EXPORTER_OTLP_ENDPOINT is not a URL/);
  expect(problem({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://c:4317' })).toMatch(/^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:\/\/ or https:\/\/ URL/);
  expect(problem({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatch(/^OTEL_EXPORTER_OTLP_PROTOCOL is "grpc"/);
  expect(problem({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toMatch(/^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL/);
  expect(problem({ OTEL_TRACES_EXPORTER: 'zipkin' })).toMatch(/^OTEL_TRACES_EXPORTER names "zipkin"/);
});

test('tool spans: short error codes, never the message', () => {
  expect(toolErrorCode("ENOENT: no such file or directory, open '/x/y.md'")).toBe('ENOENT');
  expect(toolErrorCode('File too large: /x is 9 bytes; the read limit is 1 bytes')).toBe('file_too_large');
  expect(toolErrorCode('Security violation: Access denied')).toBe('security_violation');
  expect(toolErrorCode('Invalid arguments for read_file: file_path: required string is missing')).toBe('invalid_arguments');
  expect(toolErrorCode('The result of read_file is 2000000 bytes, over the limit of 1000000 bytes for one tool result; ask for less')).toBe('result_too_large');
  expect(toolErrorCode('something odd happened')).toBe('tool_error');
  expect(toolErrorCode(undefined)).toBe('tool_error');
});
