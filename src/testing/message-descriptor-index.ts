/**
 * Every message type of a loaded proto root, by full name (`.pkg.Order.Line`), from the `fileDescriptorProtos`
 * @grpc/proto-loader puts next to each message descriptor (encoded `google.protobuf.FileDescriptorProto`s, one per
 * package of the root, shared by every definition of one load). The response check uses it to reach message types
 * declared outside the response message: at the top of its file, or in another package or file.
 *
 * Decoding uses protobufjs reflection over the handful of descriptor.proto fields needed (declared below as a JSON
 * descriptor, field numbers from descriptor.proto; the others are skipped), as `retry/retry-info.ts` does, not
 * `protobufjs/ext/descriptor`: that module is CommonJS whose exports Node's ESM loader sees only as `default` while
 * its typings declare named ones, and loading it patches protobufjs's reflection classes. Bytes that do not decode
 * give no index (the caller then checks nested types only); nothing here throws.
 */
import protobuf from 'protobufjs/light.js';

/** A message's descriptor as proto-loader's `type` has it (`DescriptorProto` as a plain object), fields used. */
export interface MessageDescriptor {
  name?: unknown;
  field?: unknown;
  nestedType?: unknown;
  oneofDecl?: unknown;
  enumType?: unknown;
  options?: { mapEntry?: unknown } | null;
}

/** An enum's descriptor as proto-loader has it (`EnumDescriptorProto` as a plain object), fields used. */
export interface EnumDescriptor {
  name?: unknown;
  value?: unknown;
}

/** An enum type: its name and the names of its values, as a response may give them. */
export interface EnumValues {
  readonly name: string;
  readonly values: readonly string[];
}

/** The names of an enum descriptor's values; undefined when it has none readable. */
export function enumValuesOf(descriptor: EnumDescriptor): EnumValues | undefined {
  if (typeof descriptor.name !== 'string' || !Array.isArray(descriptor.value)) {
    return undefined;
  }
  const values = (descriptor.value as { name?: unknown }[])
    .map((v) => v?.name)
    .filter((name): name is string => typeof name === 'string');
  return values.length === 0 ? undefined : { name: descriptor.name, values };
}

/** One message type of the index: its descriptor and the package of the file declaring it (`pkg`, or ''). */
export interface IndexedMessage {
  readonly descriptor: MessageDescriptor;
  readonly package: string;
}

/** Full name (`.pkg.Order.Line`) → message type. */
export type MessageDescriptorIndex = ReadonlyMap<string, IndexedMessage>;

/** Full name (`.pkg.Order.Status`) → enum type. */
export type EnumIndex = ReadonlyMap<string, EnumValues>;

interface Indexes {
  readonly messages: MessageDescriptorIndex;
  readonly enums: EnumIndex;
}

const root = protobuf.Root.fromJSON({
  nested: {
    FileDescriptorProto: {
      fields: {
        package: { type: 'string', id: 2 },
        messageType: { rule: 'repeated', type: 'DescriptorProto', id: 4 },
        enumType: { rule: 'repeated', type: 'EnumDescriptorProto', id: 5 },
      },
    },
    DescriptorProto: {
      fields: {
        name: { type: 'string', id: 1 },
        field: { rule: 'repeated', type: 'FieldDescriptorProto', id: 2 },
        nestedType: { rule: 'repeated', type: 'DescriptorProto', id: 3 },
        enumType: { rule: 'repeated', type: 'EnumDescriptorProto', id: 4 },
        options: { type: 'MessageOptions', id: 7 },
        oneofDecl: { rule: 'repeated', type: 'OneofDescriptorProto', id: 8 },
      },
    },
    FieldDescriptorProto: {
      fields: {
        name: { type: 'string', id: 1 },
        type: { type: 'Type', id: 5 },
        typeName: { type: 'string', id: 6 },
        oneofIndex: { type: 'int32', id: 9 },
        proto3Optional: { type: 'bool', id: 17 },
      },
      nested: {
        Type: {
          values: {
            TYPE_DOUBLE: 1,
            TYPE_FLOAT: 2,
            TYPE_INT64: 3,
            TYPE_UINT64: 4,
            TYPE_INT32: 5,
            TYPE_FIXED64: 6,
            TYPE_FIXED32: 7,
            TYPE_BOOL: 8,
            TYPE_STRING: 9,
            TYPE_GROUP: 10,
            TYPE_MESSAGE: 11,
            TYPE_BYTES: 12,
            TYPE_UINT32: 13,
            TYPE_ENUM: 14,
            TYPE_SFIXED32: 15,
            TYPE_SFIXED64: 16,
            TYPE_SINT32: 17,
            TYPE_SINT64: 18,
          },
        },
      },
    },
    MessageOptions: { fields: { mapEntry: { type: 'bool', id: 7 } } },
    OneofDescriptorProto: { fields: { name: { type: 'string', id: 1 } } },
    EnumDescriptorProto: {
      fields: {
        name: { type: 'string', id: 1 },
        value: { rule: 'repeated', type: 'EnumValueDescriptorProto', id: 2 },
      },
    },
    EnumValueDescriptorProto: { fields: { name: { type: 'string', id: 1 } } },
  },
});
const FileDescriptorProto = root.lookupType('FileDescriptorProto');
/** Enum values by name (`TYPE_MESSAGE`), as proto-loader's `type` has them; repeated fields always as arrays. */
const TO_OBJECT = { enums: String, arrays: true } as const;

interface FileObject {
  package?: string;
  messageType?: MessageDescriptor[];
  enumType?: EnumDescriptor[];
}

/** One index per `fileDescriptorProtos` array (null: it did not decode), since every definition of a load shares it. */
const cache = new WeakMap<object, Indexes | null>();

/**
 * The index of `fileDescriptorProtos` (proto-loader's array of encoded FileDescriptorProtos); undefined when it is
 * not such an array or does not decode.
 */
export function messageDescriptorIndex(fileDescriptorProtos: unknown): MessageDescriptorIndex | undefined {
  return indexesOf(fileDescriptorProtos)?.messages;
}

/** The enum types of `fileDescriptorProtos`, as {@link messageDescriptorIndex} has the message types. */
export function enumIndex(fileDescriptorProtos: unknown): EnumIndex | undefined {
  return indexesOf(fileDescriptorProtos)?.enums;
}

function indexesOf(fileDescriptorProtos: unknown): Indexes | undefined {
  if (!Array.isArray(fileDescriptorProtos)) {
    return undefined;
  }
  let indexes = cache.get(fileDescriptorProtos);
  if (indexes === undefined) {
    indexes = buildIndexes(fileDescriptorProtos);
    cache.set(fileDescriptorProtos, indexes);
  }
  return indexes ?? undefined;
}

function buildIndexes(files: readonly unknown[]): Indexes | null {
  const messages = new Map<string, IndexedMessage>();
  const enums = new Map<string, EnumValues>();
  const addEnums = (list: readonly EnumDescriptor[] | undefined, scope: string): void => {
    for (const descriptor of list ?? []) {
      const values = enumValuesOf(descriptor);
      if (values !== undefined) {
        enums.set(`${scope}.${values.name}`, values);
      }
    }
  };
  try {
    for (const bytes of files) {
      if (!(bytes instanceof Uint8Array)) {
        return null;
      }
      const file = FileDescriptorProto.toObject(FileDescriptorProto.decode(bytes), TO_OBJECT) as FileObject;
      const pkg = typeof file.package === 'string' ? file.package : '';
      const add = (list: readonly MessageDescriptor[] | undefined, scope: string): void => {
        for (const descriptor of list ?? []) {
          if (typeof descriptor.name !== 'string' || descriptor.name === '') {
            continue;
          }
          const fullName = `${scope}.${descriptor.name}`;
          messages.set(fullName, { descriptor, package: pkg });
          add(descriptor.nestedType as MessageDescriptor[] | undefined, fullName);
          addEnums(descriptor.enumType as EnumDescriptor[] | undefined, fullName);
        }
      };
      const scope = pkg === '' ? '' : `.${pkg}`;
      add(file.messageType, scope);
      addEnums(file.enumType, scope);
    }
  } catch {
    return null;
  }
  return { messages, enums };
}

/**
 * The full name of the type (message or enum: `index` holds one kind) `typeName` names in a field of the message
 * `from` (a full name), by protobuf's
 * scoping rules: a leading `.` is absolute; else `<scope>.<typeName>` for `from` itself, then each enclosing scope
 * out to the root. (protobufjs writes a field's type name relative to its message: `Item`, `other.Money`.)
 */
export function resolveMessageType(
  index: ReadonlyMap<string, unknown>,
  typeName: string,
  from: string,
): string | undefined {
  if (typeName.startsWith('.')) {
    return index.has(typeName) ? typeName : undefined;
  }
  let scope = from;
  for (;;) {
    const candidate = `${scope}.${typeName}`;
    if (index.has(candidate)) {
      return candidate;
    }
    if (scope === '') {
      return undefined;
    }
    scope = scope.slice(0, Math.max(0, scope.lastIndexOf('.')));
  }
}

/**
 * The full name of the message `type` describes (proto-loader's `type`, which carries no full name): the one entry
 * with its name and field names; of several, the one in `preferredPackage` (the service's). Undefined when none or
 * still several.
 */
export function fullNameOf(
  index: MessageDescriptorIndex,
  type: MessageDescriptor,
  preferredPackage: string | undefined,
): string | undefined {
  const fields = fieldNames(type);
  const matches = [...index].filter(
    ([, entry]) => entry.descriptor.name === type.name && fieldNames(entry.descriptor) === fields,
  );
  if (matches.length === 1) {
    return matches[0]![0];
  }
  const preferred = matches.filter(([, entry]) => entry.package === preferredPackage);
  return preferred.length === 1 ? preferred[0]![0] : undefined;
}

function fieldNames(descriptor: MessageDescriptor): string {
  const fields = Array.isArray(descriptor.field) ? (descriptor.field as { name?: unknown }[]) : [];
  return JSON.stringify(fields.map((f) => (typeof f?.name === 'string' ? f.name : '')));
}
