package pjrt

import "strconv"

// fnIndex is a function's position in PJRT_Api's table. The table only grows
// at its end between minor versions, so a position never changes within a
// major version; a plugin with fewer entries than a position lacks that
// function.
type fnIndex int

// The functions this package calls, at their positions in PJRT API 0.x.
const (
	fnErrorDestroy                 fnIndex = 0
	fnErrorMessage                 fnIndex = 1
	fnErrorGetCode                 fnIndex = 2
	fnPluginInitialize             fnIndex = 3
	fnPluginAttributes             fnIndex = 4
	fnEventDestroy                 fnIndex = 5
	fnEventIsReady                 fnIndex = 6
	fnEventError                   fnIndex = 7
	fnEventAwait                   fnIndex = 8
	fnClientCreate                 fnIndex = 10
	fnClientDestroy                fnIndex = 11
	fnClientPlatformName           fnIndex = 12
	fnClientPlatformVersion        fnIndex = 14
	fnClientAddressableDevices     fnIndex = 16
	fnClientCompile                fnIndex = 20
	fnClientBufferFromHostBuffer   fnIndex = 22
	fnDeviceDescriptionID          fnIndex = 23
	fnDeviceDescriptionKind        fnIndex = 26
	fnDeviceGetDescription         fnIndex = 29
	fnExecutableDestroy            fnIndex = 40
	fnExecutableNumOutputs         fnIndex = 44
	fnExecutableSerialize          fnIndex = 49
	fnLoadedExecutableDestroy      fnIndex = 50
	fnLoadedExecutableGetExec      fnIndex = 51
	fnLoadedExecutableDevices      fnIndex = 52
	fnLoadedExecutableExecute      fnIndex = 55
	fnExecutableDeserializeAndLoad fnIndex = 56
	fnBufferDestroy                fnIndex = 58
	fnBufferElementType            fnIndex = 59
	fnBufferDimensions             fnIndex = 60
	fnBufferIsDeleted              fnIndex = 68
	fnBufferToHostBuffer           fnIndex = 70
	fnBufferReadyEvent             fnIndex = 72
	fnBufferUnsafePointer          fnIndex = 73
	fnTopologyCreate               fnIndex = 82
	fnTopologyDestroy              fnIndex = 83
	fnTopologyPlatformName         fnIndex = 84
	fnTopologyPlatformVersion      fnIndex = 85
	fnTopologyDeviceDescriptions   fnIndex = 86
	fnCompile                      fnIndex = 89
	fnExecutableOutputElementTypes fnIndex = 90
	fnExecutableOutputDimensions   fnIndex = 91

	fnExecutableGetCompiledMemoryStats fnIndex = 96
)

var fnNames = map[fnIndex]string{
	fnErrorDestroy: "PJRT_Error_Destroy", fnErrorMessage: "PJRT_Error_Message",
	fnErrorGetCode: "PJRT_Error_GetCode", fnPluginInitialize: "PJRT_Plugin_Initialize",
	fnPluginAttributes: "PJRT_Plugin_Attributes", fnEventDestroy: "PJRT_Event_Destroy",
	fnEventIsReady: "PJRT_Event_IsReady", fnEventError: "PJRT_Event_Error",
	fnEventAwait: "PJRT_Event_Await", fnClientCreate: "PJRT_Client_Create",
	fnClientDestroy: "PJRT_Client_Destroy", fnClientPlatformName: "PJRT_Client_PlatformName",
	fnClientPlatformVersion:        "PJRT_Client_PlatformVersion",
	fnClientAddressableDevices:     "PJRT_Client_AddressableDevices",
	fnClientCompile:                "PJRT_Client_Compile",
	fnClientBufferFromHostBuffer:   "PJRT_Client_BufferFromHostBuffer",
	fnDeviceDescriptionID:          "PJRT_DeviceDescription_Id",
	fnDeviceDescriptionKind:        "PJRT_DeviceDescription_Kind",
	fnDeviceGetDescription:         "PJRT_Device_GetDescription",
	fnExecutableDestroy:            "PJRT_Executable_Destroy",
	fnExecutableNumOutputs:         "PJRT_Executable_NumOutputs",
	fnExecutableSerialize:          "PJRT_Executable_Serialize",
	fnLoadedExecutableDestroy:      "PJRT_LoadedExecutable_Destroy",
	fnLoadedExecutableGetExec:      "PJRT_LoadedExecutable_GetExecutable",
	fnLoadedExecutableDevices:      "PJRT_LoadedExecutable_AddressableDevices",
	fnLoadedExecutableExecute:      "PJRT_LoadedExecutable_Execute",
	fnExecutableDeserializeAndLoad: "PJRT_Executable_DeserializeAndLoad",
	fnBufferDestroy:                "PJRT_Buffer_Destroy",
	fnBufferElementType:            "PJRT_Buffer_ElementType",
	fnBufferDimensions:             "PJRT_Buffer_Dimensions",
	fnBufferIsDeleted:              "PJRT_Buffer_IsDeleted",
	fnBufferToHostBuffer:           "PJRT_Buffer_ToHostBuffer",
	fnBufferReadyEvent:             "PJRT_Buffer_ReadyEvent",
	fnBufferUnsafePointer:          "PJRT_Buffer_UnsafePointer",
	fnTopologyCreate:               "PJRT_TopologyDescription_Create",
	fnTopologyDestroy:              "PJRT_TopologyDescription_Destroy",
	fnTopologyPlatformName:         "PJRT_TopologyDescription_PlatformName",
	fnTopologyPlatformVersion:      "PJRT_TopologyDescription_PlatformVersion",
	fnTopologyDeviceDescriptions:   "PJRT_TopologyDescription_GetDeviceDescriptions",
	fnCompile:                      "PJRT_Compile",
	fnExecutableOutputElementTypes: "PJRT_Executable_OutputElementTypes",
	fnExecutableOutputDimensions:   "PJRT_Executable_OutputDimensions",

	fnExecutableGetCompiledMemoryStats: "PJRT_Executable_GetCompiledMemoryStats",
}

func (f fnIndex) String() string {
	if n, ok := fnNames[f]; ok {
		return n
	}
	return "PJRT function #" + strconv.Itoa(int(f))
}
