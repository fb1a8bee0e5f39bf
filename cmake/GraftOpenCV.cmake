# OpenCV's dnn module for the tests (re-frozen graphs run through cv::dnn) and the benchmarks' peer.
# Sets OpenCV_FOUND, OpenCV_LIBS, OpenCV_INCLUDE_DIRS. Debian ships OpenCVConfig.cmake only with
# libopencv-dev (every module); libopencv-dnn-dev has the headers and the two libraries we need,
# so those are found directly when the config package is absent.
find_package(OpenCV QUIET COMPONENTS core dnn)
if(NOT OpenCV_FOUND)
  find_path(GRAFT_OPENCV_INCLUDE opencv2/dnn.hpp PATH_SUFFIXES opencv4)
  find_library(GRAFT_OPENCV_DNN opencv_dnn)
  find_library(GRAFT_OPENCV_CORE opencv_core)
  if(GRAFT_OPENCV_INCLUDE AND GRAFT_OPENCV_DNN AND GRAFT_OPENCV_CORE)
    set(OpenCV_FOUND TRUE)
    set(OpenCV_LIBS ${GRAFT_OPENCV_DNN} ${GRAFT_OPENCV_CORE})
    set(OpenCV_INCLUDE_DIRS ${GRAFT_OPENCV_INCLUDE})
  endif()
endif()
