import Foundation
import Testing
import RealmDB
import TestSupport

// Persisted enums declared exactly as realm-swift's documentation ("Define a Realm Object Model", enum
// properties) and its own test models declare them; only `import RealmDB` differs.

// Define the enum
enum TaskStatusEnum: String, PersistableEnum {
    case notStarted
    case inProgress
    case complete
}

/// The documentation's model is named `Task`, which would hide Swift's `Task` in this module: here it is
/// declared inside a namespace, unchanged.
enum RealmSwiftDocs {
    // To use the enum:
    class Task: Object {
        @Persisted var name: String = ""
        @Persisted var owner: String?

        // Required enum property
        @Persisted var status = TaskStatusEnum.notStarted

        // Optional enum property
        @Persisted var optionalTaskStatusEnumProperty: TaskStatusEnum?
    }
}

enum ModernIntEnum: Int, Codable, PersistableEnum {
    case value1 = 1
    case value2 = 3
    case value3 = 5
}
enum ModernStringEnum: String, Codable, PersistableEnum {
    case value1 = "a"
    case value2 = "c"
    case value3 = "e"
    case value4 = "Foó"
}

class ModernEnumsObject: Object {
    @Persisted var intEnumCol: ModernIntEnum
    @Persisted var stringEnumCol: ModernStringEnum
    @Persisted var optIntEnumCol: ModernIntEnum?
    @Persisted var optStringEnumCol: ModernStringEnum?
    @Persisted var arrayIntEnum: List<ModernIntEnum>
    @Persisted var arrayOptStringEnum: List<ModernStringEnum?>
}

class ModernIndexedIntEnumObject: Object {
    @Persisted(indexed: true) var value: ModernIntEnum
}

class ModernPrimaryIntEnumObject: Object {
    @Persisted(primaryKey: true) var pk: ModernIntEnum
}

@Suite struct RealmSwiftEnumSampleTests {
    @Test func theDocumentationModel() throws {
        let realm = try memoryRealm([RealmSwiftDocs.Task.self])
        let task = RealmSwiftDocs.Task()
        task.name = "Write docs"
        #expect(task.status == .notStarted)
        try realm.write { realm.add(task) }
        try realm.write {
            task.status = .inProgress
            task.optionalTaskStatusEnumProperty = .complete
        }
        let found = realm.objects(RealmSwiftDocs.Task.self).filter("status == $0", TaskStatusEnum.inProgress.rawValue)
        #expect(found.first?.optionalTaskStatusEnumProperty == .complete)
        #expect(realm.schema["Task"]?["status"]?.typeName == "string")
    }

    @Test func realmSwiftsTestModels() throws {
        let realm = try memoryRealm([ModernEnumsObject.self, ModernIndexedIntEnumObject.self, ModernPrimaryIntEnumObject.self])
        let object = ModernEnumsObject()
        #expect(object.intEnumCol == .value1 && object.stringEnumCol == .value1)
        #expect(object.optIntEnumCol == nil)
        try realm.write {
            realm.add(object)
            object.stringEnumCol = .value4
            object.arrayIntEnum.append(objectsIn: [.value3, .value2])
            object.arrayOptStringEnum.append(objectsIn: [.value4, nil])
            realm.add(ModernIndexedIntEnumObject(value: ["value": ModernIntEnum.value3]))
            realm.add(ModernPrimaryIntEnumObject(value: [ModernIntEnum.value2]))
            object["optIntEnumCol"] = 10
        }
        #expect(object.optIntEnumCol == nil)
        #expect(object["stringEnumCol"] as? String == "Foó")
        #expect(Array(object.arrayIntEnum) == [.value3, .value2])
        #expect(Array(object.arrayOptStringEnum) == [.value4, nil])
        #expect(realm.objects(ModernIndexedIntEnumObject.self).filter("value == 5").count == 1)
        #expect(realm.object(ofType: ModernPrimaryIntEnumObject.self, forPrimaryKey: ModernIntEnum.value2) != nil)
        let encoded = try JSONEncoder().encode([ModernStringEnum.value4])
        #expect(String(decoding: encoded, as: UTF8.self) == "[\"Foó\"]")
    }
}
